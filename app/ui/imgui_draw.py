"""Dear ImGui draw data rendered through SlangPy's render-pipeline API (shaders/imgui.slang).

One upload of all draw lists' vertices and indices per frame, one render pass, one indexed draw
per ImGui command with its scissor rectangle and texture. Colour handling matches SlangPy's own
renderer (see the shader). Textures come from ImGui's texture protocol (draw_data.textures) and
from `texture_ref` for our own images; both resolve through this object's id -> texture table."""

from __future__ import annotations

import ctypes

import numpy as np
import slangpy as spy
from imgui_bundle import imgui

from app.device import SHADER_DIR

VERTEX_BYTES = 20  # ImDrawVert: pos float2, uv float2, col RGBA8
INDEX_BYTES = 4    # ImDrawIdx is unsigned int in imgui-bundle 1.93 (checked in tests/test_ui_renderer.py)
_INDEX_FORMAT = {2: spy.IndexFormat.uint16, 4: spy.IndexFormat.uint32}[INDEX_BYTES]
_ATLAS_FORMATS = {4: spy.Format.rgba8_unorm}
_FRAME_IDS = 1 << 24  # first ImTextureID of our own images; ImGui's textures count up from 1


class ImGuiDraw:
    def __init__(self, device: spy.Device):
        self.device = device
        self.program = device.load_program(str(SHADER_DIR / "imgui.slang"), ["ui_vertex", "ui_fragment"])
        self.layout = device.create_input_layout(
            input_elements=[
                {"semantic_name": "POSITION", "format": spy.Format.rg32_float, "offset": 0},
                {"semantic_name": "TEXCOORD", "format": spy.Format.rg32_float, "offset": 8},
                {"semantic_name": "COLOR", "format": spy.Format.rgba8_unorm, "offset": 16}],
            vertex_streams=[{"stride": VERTEX_BYTES}])
        self.sampler = device.create_sampler(
            min_filter=spy.TextureFilteringMode.linear, mag_filter=spy.TextureFilteringMode.linear,
            address_u=spy.TextureAddressingMode.wrap, address_v=spy.TextureAddressingMode.wrap,
            max_lod=0.0)
        self.pipelines: dict[spy.Format, spy.RenderPipeline] = {}
        self.vertices = self.indices = None
        self._atlas: dict[int, spy.Texture] = {}  # ImGui-owned textures (font atlas), ids 1, 2, ...
        self._next_atlas_id = 1
        self._frame: dict[int, spy.Texture] = {}  # our images in the frame being built
        self._frame_ids: dict[int, int] = {}  # Python id() of those -> their ImTextureID

    # ---- textures ------------------------------------------------------------------------
    def texture_ref(self, texture: spy.Texture) -> imgui.ImTextureRef:
        """An ImTextureRef for `texture`, valid until the next render(), which lets it go.
        ImTextureID is a 32-bit int here; ours count up from _FRAME_IDS, the atlas's from 1."""
        texture_id = self._frame_ids.get(id(texture))
        if texture_id is None:
            texture_id = _FRAME_IDS + len(self._frame)
            self._frame[texture_id] = texture
            self._frame_ids[id(texture)] = texture_id
        return imgui.ImTextureRef(texture_id)

    def _resolve(self, texture_id: int) -> spy.Texture:
        texture = self._atlas.get(texture_id)
        if texture is None:
            texture = self._frame.get(texture_id)
        if texture is None:
            raise ValueError(f"unknown ImGui texture id {texture_id}")
        return texture

    def sync_textures(self, draw_data) -> None:
        """Carries out ImGui's create/update/destroy requests for the textures it owns."""
        font_atlas = imgui.get_io().fonts.tex_data
        for tex in draw_data.textures:
            status = tex.status
            if status in (imgui.ImTextureStatus.ok, imgui.ImTextureStatus.destroyed):
                continue
            if status == imgui.ImTextureStatus.want_destroy:
                if tex.unused_frames > 0:  # the GPU may still read it in the frame before
                    self._atlas.pop(tex.get_tex_id(), None)
                    tex.set_tex_id(0)
                    tex.set_status(imgui.ImTextureStatus.destroyed)
                continue
            if tex.bytes_per_pixel not in _ATLAS_FORMATS:
                raise ValueError(f"unsupported ImGui texture format ({tex.bytes_per_pixel} bytes per pixel)")
            pixels = tex.get_pixels_array().reshape(tex.height, tex.width, tex.bytes_per_pixel)
            existing = self._atlas.get(tex.get_tex_id())
            if status == imgui.ImTextureStatus.want_updates and existing is not None \
                    and (existing.width, existing.height) == (tex.width, tex.height):
                existing.copy_from_numpy(pixels)
            else:
                texture = self.device.create_texture(
                    format=_ATLAS_FORMATS[tex.bytes_per_pixel], width=tex.width, height=tex.height,
                    usage=spy.TextureUsage.shader_resource, data=pixels, label="imgui texture")
                self._atlas.pop(tex.get_tex_id(), None)
                self._atlas[self._next_atlas_id] = texture
                tex.set_tex_id(self._next_atlas_id)
                self._next_atlas_id += 1
            tex.set_status(imgui.ImTextureStatus.ok)
            if font_atlas is None or tex.unique_id != font_atlas.unique_id:
                tex.destroy_pixels()  # the font atlas keeps its pixels for incremental updates

    # ---- drawing -------------------------------------------------------------------------
    def _pipeline(self, format: spy.Format) -> spy.RenderPipeline:
        if format not in self.pipelines:
            blend = {"format": format, "enable_blend": True,
                     "color": {"src_factor": spy.BlendFactor.src_alpha,
                               "dst_factor": spy.BlendFactor.inv_src_alpha, "op": spy.BlendOp.add},
                     "alpha": {"src_factor": spy.BlendFactor.one,
                               "dst_factor": spy.BlendFactor.inv_src_alpha, "op": spy.BlendOp.add}}
            self.pipelines[format] = self.device.create_render_pipeline(
                program=self.program, input_layout=self.layout,
                primitive_topology=spy.PrimitiveTopology.triangle_list,
                targets=[blend], rasterizer={"cull_mode": spy.CullMode.none})
        return self.pipelines[format]

    def _upload(self, encoder: spy.CommandEncoder, lists) -> None:
        vertex_data = _gather([dl.vtx_buffer for dl in lists], VERTEX_BYTES)
        index_data = _gather([dl.idx_buffer for dl in lists], INDEX_BYTES)
        self.vertices = self._fit(self.vertices, vertex_data.nbytes, spy.BufferUsage.vertex_buffer)
        self.indices = self._fit(self.indices, index_data.nbytes, spy.BufferUsage.index_buffer)
        encoder.upload_buffer_data(self.vertices, 0, vertex_data)
        encoder.upload_buffer_data(self.indices, 0, index_data)

    def _fit(self, buffer, size: int, usage: spy.BufferUsage) -> spy.Buffer:
        if buffer is not None and buffer.size >= size:
            return buffer
        return self.device.create_buffer(size=max(size + size // 2, 64 * 1024),
                                         usage=usage | spy.BufferUsage.copy_destination, label="imgui geometry")

    def render(self, draw_data, target: spy.Texture, encoder: spy.CommandEncoder) -> None:
        """Records `draw_data` into `target` (loaded, not cleared) within `encoder`. Our images
        registered by texture_ref() for this frame are released when it returns."""
        try:
            lists = list(draw_data.cmd_lists)
            if lists and draw_data.total_idx_count > 0:
                self._upload(encoder, lists)
                self._record(draw_data, lists, target, encoder)
        finally:
            self._frame, self._frame_ids = {}, {}

    def _record(self, draw_data, lists, target: spy.Texture, encoder: spy.CommandEncoder) -> None:
        (px, py), (sx, sy) = draw_data.display_pos, draw_data.framebuffer_scale
        state = spy.RenderState()
        state.vertex_buffers, state.index_buffer, state.index_format = [self.vertices], self.indices, _INDEX_FORMAT
        state.viewports = [spy.Viewport.from_size(target.width, target.height)]
        with encoder.begin_render_pass({"color_attachments": [{"view": target.create_view({}),
                                                                "load_op": spy.LoadOp.load,
                                                                "store_op": spy.StoreOp.store}]}) as rp:
            cursor = spy.ShaderCursor(rp.bind_pipeline(self._pipeline(target.format)))
            cursor["ndc_scale"] = spy.float2(2.0 * sx / target.width, -2.0 * sy / target.height)
            cursor["ndc_origin"] = spy.float2(-1.0 - 2.0 * px * sx / target.width, 1.0 + 2.0 * py * sy / target.height)
            cursor["target_is_srgb"] = spy.get_format_info(target.format).is_srgb_format()
            cursor["ui_sampler"] = self.sampler
            bound, vertex_base, index_base = None, 0, 0
            for dl in lists:
                for cmd in dl.cmd_buffer:
                    clip = cmd.clip_rect
                    x0, y0 = max(int((clip.x - px) * sx), 0), max(int((clip.y - py) * sy), 0)
                    x1, y1 = min(int((clip.z - px) * sx), target.width), min(int((clip.w - py) * sy), target.height)
                    if x1 <= x0 or y1 <= y0 or cmd.elem_count == 0:
                        continue
                    texture_id = cmd.get_tex_id()
                    if texture_id != bound:
                        cursor["ui_texture"] = self._resolve(texture_id)
                        bound = texture_id
                    state.scissor_rects = [spy.ScissorRect({"min_x": x0, "min_y": y0, "max_x": x1, "max_y": y1})]
                    rp.set_render_state(state)
                    rp.draw_indexed({"vertex_count": cmd.elem_count,
                                     "start_index_location": index_base + cmd.idx_offset,
                                     "start_vertex_location": vertex_base + cmd.vtx_offset})
                vertex_base += dl.vtx_buffer.size()
                index_base += dl.idx_buffer.size()

    def destroy(self) -> None:
        self._atlas.clear()
        self._frame.clear()
        self._frame_ids.clear()
        self.pipelines.clear()
        self.vertices = self.indices = None


def _gather(vectors, item_bytes: int) -> np.ndarray:
    """The ImVectors' contents back to back in one array, padded to 4 bytes for the copy."""
    sizes = [vector.size() * item_bytes for vector in vectors]
    data = np.zeros(-(-sum(sizes) // 4) * 4, np.uint8)
    offset = data.ctypes.data
    for vector, size in zip(vectors, sizes):
        ctypes.memmove(offset, vector.data_address(), size)
        offset += size
    return data

