"""The framework runtime: builds a profile's plugins and runs the extension points."""
