"""Everything that imports imgui_bundle lives in this package: the window, the offscreen render,
the panels and the state they share.

Imports: check, files, loop, views and everything below them; never app/entry."""
