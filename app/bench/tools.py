"""The benchmarks' tools as `visual-trainer-bench` names them (app/bench/command.py runs them):
each name's module and what it does, and the command line each one's --help shows."""

from __future__ import annotations

COMMAND = "visual-trainer-bench"
TOOLS = {  # name on the command line: (module under app/bench/, what it does)
    "photo": ("photo", "write a procedural photo-like test image (PNG)"),
    "image-fit": ("image_fit", "how long a hash grid takes to fit an image to a PSNR"),
    "frame": ("frame", "frame time of the window, rendered offscreen"),
    "points": ("points", "what a dataset of up to a million points costs"),
    "startup": ("startup", "process start to the first trained step, cold and warm"),
    "evaluations": ("evaluations", "what an evaluation costs: its figures, the whole maps, the GPU pass"),
    "soak": ("soak", "a long session: memory and frame time stay bounded"),
    "roads": ("roads", "the cooperative-vector trainers beside the app's (a GPU with them)"),
    "serve": ("serve", "the window served to a browser: frames/s, latency, bytes/s, codecs"),
    "shape": ("sdf_sharpness", "how sharp a learned shape comes out: outline error in pixels, |grad f|"),
    "mesh-fit": ("mesh_fit", "how long a mesh's signed distance takes to reach an IoU and a Chamfer distance"),
    "mesh": ("mesh_export", "what --export-mesh and the surface metrics cost: field, marching cubes, metrics"),
}


def prog(module: str) -> str:
    """The command that runs the benchmark module `module` ("bench" or "bench.image_fit"), for
    its --help: "visual-trainer-bench" or "visual-trainer-bench image-fit"."""
    name = module.removeprefix("bench").removeprefix(".")
    tool = next((tool for tool, (path, _) in TOOLS.items() if path == name), None)
    return f"{COMMAND} {tool}" if tool else COMMAND


def listing() -> str:
    """The tools, one a line, for the speed benchmark's --help."""
    width = max(map(len, TOOLS))
    lines = [f"  {name:<{width}}  {what}" for name, (_, what) in TOOLS.items()]
    return f"tools ({COMMAND} TOOL --help for each one's options):\n" + "\n".join(lines)
