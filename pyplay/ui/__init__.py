"""The Panel + Bokeh face of pyplay (the core never imports this package)."""
