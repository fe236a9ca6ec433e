"""Everything that imports imgui_bundle lives in this package."""
