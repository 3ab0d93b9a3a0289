"""The browser UI: server-rendered pages with htmx, live over Channels."""
