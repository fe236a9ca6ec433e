"""One module per UI panel; each draws from and edits AppState."""
