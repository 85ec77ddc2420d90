"""The measuring machine: its settings (checked and tuned), topology, kernel facts recorded with
every sweep, and the Debian packages the kit needs."""
