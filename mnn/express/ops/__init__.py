"""Op families. Each module registers its ops in the table when imported; the package
``mnn.express`` imports every module listed here."""
