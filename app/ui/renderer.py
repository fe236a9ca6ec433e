"""Dear ImGui (imgui-bundle's Python API) drawn through SlangPy's slangpy.ui.imgui_bundle on the
training device. sgl's renderer takes its viewport from its own ImGui context, so an empty sgl frame
is begun and ended first (without it SlangPy 0.43 draws nothing: "Viewport has non-positive width
or height"). A renderer of our own was no faster (docs/benchmarks.md, 'UI renderer')."""

from __future__ import annotations

import slangpy as spy
from imgui_bundle import imgui, implot
from slangpy.ui import imgui_bundle as spy_imgui

from .fonts import UiFont
from .style import apply_style

TARGET_FORMAT = spy.Format.rgba8_unorm  # the renderer encodes sRGB itself for non-sRGB targets


class UiRenderer:
    def __init__(self, device: spy.Device, width: int, height: int, font_scale: float = 1.0):
        self.device = device
        self.context = spy_imgui.create_imgui_context(width, height)
        self.plot_context = implot.create_context()
        implot.set_current_context(self.plot_context)
        imgui.get_io().config_flags |= imgui.ConfigFlags_.nav_enable_keyboard | imgui.ConfigFlags_.docking_enable
        imgui.get_io().set_ini_filename("")  # the window saves its layout itself (app.ui.settings)
        self.font = UiFont()
        self.scale = font_scale
        apply_style(font_scale)
        self.sgl_context = spy.ui.Context(device)
        self._textures_drawn: dict[int, spy.Texture] = {}  # registered with SlangPy, last frame
        self._textures_used: dict[int, spy.Texture] = {}  # asked for this frame

    def make_current(self) -> None:
        imgui.set_current_context(self.context)
        implot.set_current_context(self.plot_context)

    def set_scale(self, scale: float) -> None:
        """The UI drawn `scale` times larger, fonts and sizes alike (a browser's devicePixelRatio)."""
        if scale == self.scale:
            return
        self.make_current()
        style = imgui.get_style()
        style.scale_all_sizes(scale / self.scale)  # relative: another page's ratio later undoes it
        style.font_scale_main = scale
        self.scale = scale

    def begin_frame(self, width: int, height: int, delta_time: float) -> None:
        self.make_current()
        self.font.update()
        spy_imgui.begin_frame(width, height, max(delta_time, 1e-4))

    def end_frame(self, target: spy.Texture, encoder: spy.CommandEncoder) -> None:
        """Finishes the ImGui frame and records its drawing into `target`."""
        self.draw(self.finish(), target, encoder)

    def finish(self):
        """Finishes the ImGui frame: its draw data, with the textures it uses uploaded."""
        imgui.render()
        draw_data = imgui.get_draw_data()
        spy_imgui.sync_draw_data_textures(self.device, self.sgl_context, draw_data)
        return draw_data

    def draw(self, draw_data, target: spy.Texture, encoder: spy.CommandEncoder) -> None:
        """Records the drawing of `draw_data` (from finish()) into `target`."""
        self.sgl_context.begin_frame(target.width, target.height)
        self.sgl_context.end_frame(target, encoder)
        spy_imgui.render_imgui_draw_data(self.sgl_context, draw_data, target, encoder)
        self._forget_textures_not_drawn()

    def texture(self, texture: spy.Texture) -> imgui.ImTextureRef:
        self._textures_used[id(texture)] = texture
        return spy_imgui.texture_ref(texture)

    def _forget_textures_not_drawn(self) -> None:
        """SlangPy's texture_ref() keeps every texture it was given in a module-level registry
        for good (0.43.1 has no public release), so each rebuilt network's heatmap atlases
        stayed alive, GPU memory and all. Textures this renderer drew last frame and not in
        this one leave the registry (they are registered again if drawn later). The registry is
        private to SlangPy: a version without it keeps its textures rather than failing."""
        ids = getattr(spy_imgui, "_TEXTURE_IDS_BY_PY_ID", {})
        release = getattr(spy_imgui, "_release_texture", None)
        for key in self._textures_drawn.keys() - self._textures_used.keys():
            texture_id = ids.get(key)
            if texture_id is not None and release is not None:
                release(texture_id)
        self._textures_drawn, self._textures_used = self._textures_used, {}

    def destroy(self) -> None:
        self._textures_used = {}
        self._forget_textures_not_drawn()
        implot.destroy_context(self.plot_context)
        imgui.destroy_context(self.context)
        # sgl's ui.Context owns an ImGui context of sgl's own; destroying it resets sgl's current
        # one. Left to the garbage collector (an AppState in a reference cycle), that happened in
        # the middle of another renderer's frame and crashed its draw: destroy it now.
        self.sgl_context = None


def create_target(device: spy.Device, width: int, height: int) -> spy.Texture:
    return device.create_texture(
        format=TARGET_FORMAT,
        width=width,
        height=height,
        usage=spy.TextureUsage.render_target | spy.TextureUsage.shader_resource | spy.TextureUsage.copy_source,
    )


def save_png(texture: spy.Texture, path: str) -> None:
    bitmap = texture.to_bitmap().convert(spy.Bitmap.PixelFormat.rgb, spy.Bitmap.ComponentType.uint8, False)
    bitmap.write(str(path))
