"""Generated depth scenes and the "real sensor" oracle of the PRISM study [rec].

A scene is a tilted background plane seen by a pinhole camera (`size` × `size` pixels, focal length `size`
pixels), one *target* object (box, cylinder or sphere: the downstream label) and up to two distractor boxes.
Every object has a material: matte, dark (albedo below 0.1), specular or transparent. The renderer casts one ray
per pixel (numpy, analytic intersections) and returns the clean simulated depth (camera z), the surface normal,
the material and an RGB image (Lambert shading, a Blinn-Phong highlight on specular surfaces, transparent
surfaces tinted over the background).

The sensor oracle corrupts the clean depth the two ways the study separates:

- *sensing invalidation* (the sensor returns no depth, stored as 0): dark albedo; specular surfaces seen within
  20° of the surface normal (saturated); transparent surfaces; range beyond `z_max`; stereo shadows (a pixel
  hidden from the second camera by a nearer surface on its left, width ∝ baseline · f · (1/z_near − 1/z_far));
  and 30 % of the pixels on a depth discontinuity;
- *measurement inaccuracy* on the pixels still valid: D435-style Gaussian noise σ_z = k·z², flying pixels on
  discontinuities (a random blend of the two sides) and disparity quantisation to 1/16 pixel.

Everything follows the seed only, so a trial's training, test and downstream sets are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHAPES = ("box", "cylinder", "sphere")
MATERIALS = ("matte", "dark", "specular", "transparent")
MATERIAL_PROBS = (0.5, 0.15, 0.2, 0.15)
MATTE, DARK, SPECULAR, TRANSPARENT = range(4)
BACKGROUND_MATERIAL = MATTE

Z_MAX = 4.0  # sensor range, metres
NOISE_K = 0.012  # σ_z = k z² (metres)
BASELINE_FOCAL = 4.0  # stereo baseline × focal length in pixel·metres (disparity d = bf / z)
SUBPIXEL = 1.0 / 16.0  # disparity quantisation step (pixels)
SPECULAR_ANGLE_DEG = 20.0
EDGE_DROPOUT = 0.3  # share of discontinuity pixels the sensor drops
EDGE_JUMP = 0.1  # a relative depth step |Δz| / z above this between neighbours is a discontinuity
LIGHT = np.array([0.4, 0.6, -0.7]) / np.linalg.norm([0.4, 0.6, -0.7])


@dataclass(frozen=True)
class Batch:
    """A batch of rendered scenes with their sensor captures (arrays of N scenes).

    depth (N, H, W) clean camera-z depth; rgb (N, 3, H, W); normal_z (N, H, W) cosine between the normal and
    the view ray; material (N, H, W) int; label (N,) target shape index; real (N, H, W) the sensor's depth
    (0 where invalid); invalid (N, H, W) bool.
    """

    depth: np.ndarray
    rgb: np.ndarray
    normal_z: np.ndarray
    material: np.ndarray
    label: np.ndarray
    real: np.ndarray
    invalid: np.ndarray

    def __len__(self) -> int:
        return int(self.depth.shape[0])

    def inputs(self) -> np.ndarray:
        """(N, 5, H, W) float32 network inputs: clean depth / Z_MAX, RGB, view cosine."""
        return np.concatenate(
            [(self.depth / Z_MAX)[:, None], self.rgb, self.normal_z[:, None]], axis=1
        ).astype(np.float32)


def _rays(size: int) -> np.ndarray:
    """(H, W, 3) unit ray directions of a pinhole camera with focal length `size` pixels, +z forward, +y up."""
    coords = (np.arange(size) + 0.5 - size / 2) / size
    u, v = np.meshgrid(coords, -coords)
    rays = np.stack([u, v, np.ones_like(u)], axis=-1)
    return rays / np.linalg.norm(rays, axis=-1, keepdims=True)


def _hit_plane(rays: np.ndarray, z0: float, slope_u: float, slope_v: float) -> tuple[np.ndarray, np.ndarray]:
    """The plane z = z0 + slope_u x + slope_v y: (t, normal) for every ray (normal towards the camera)."""
    normal = np.array([-slope_u, -slope_v, 1.0])
    normal = -normal / np.linalg.norm(normal)
    t = z0 / (rays[..., 2] - slope_u * rays[..., 0] - slope_v * rays[..., 1])
    return t, np.broadcast_to(normal, rays.shape)


def _hit_sphere(rays: np.ndarray, centre: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    b = rays @ centre
    disc = b**2 - (centre @ centre - radius**2)
    t = np.where(disc >= 0, b - np.sqrt(np.maximum(disc, 0.0)), np.inf)
    points = rays * t[..., None]
    normal = (points - centre) / radius
    return t, normal


def _hit_box(rays: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = lo / rays
        t2 = hi / rays
    t_near = np.minimum(t1, t2)
    t_far = np.maximum(t1, t2)
    entry = t_near.max(axis=-1)
    exit_ = t_far.min(axis=-1)
    t = np.where((entry <= exit_) & (entry > 0), entry, np.inf)
    axis = t_near.argmax(axis=-1)
    normal = np.zeros(rays.shape)
    sign = -np.sign(np.take_along_axis(rays, axis[..., None], axis=-1))[..., 0]
    np.put_along_axis(normal, axis[..., None], sign[..., None], axis=-1)
    return t, normal


def _hit_cylinder(rays: np.ndarray, centre: np.ndarray, radius: float, half_height: float) -> tuple[
        np.ndarray, np.ndarray]:
    """A cylinder with a vertical (y) axis through `centre`, side wall and flat caps."""
    dx, dz = rays[..., 0], rays[..., 2]
    cx, cy, cz = centre
    a = dx**2 + dz**2
    b = dx * cx + dz * cz
    c = cx**2 + cz**2 - radius**2
    disc = b**2 - a * c
    t_side = np.where(disc >= 0, (b - np.sqrt(np.maximum(disc, 0.0))) / np.maximum(a, 1e-12), np.inf)
    y_side = rays[..., 1] * t_side
    t_side = np.where(np.abs(y_side - cy) <= half_height, t_side, np.inf)
    points = rays * t_side[..., None]
    side_normal = np.stack([points[..., 0] - cx, np.zeros_like(a), points[..., 2] - cz], axis=-1) / radius
    t_cap = np.full(a.shape, np.inf)
    cap_normal = np.zeros(rays.shape)
    for cap_y, ny in ((cy + half_height, 1.0), (cy - half_height, -1.0)):
        with np.errstate(divide="ignore", invalid="ignore"):
            t = cap_y / rays[..., 1]
        p = rays * t[..., None]
        inside = (t > 0) & ((p[..., 0] - cx) ** 2 + (p[..., 2] - cz) ** 2 <= radius**2) & (ny * rays[..., 1] < 0)
        better = inside & (t < t_cap)
        t_cap = np.where(better, t, t_cap)
        cap_normal[better] = (0.0, ny, 0.0)
    use_cap = t_cap < t_side
    return np.where(use_cap, t_cap, t_side), np.where(use_cap[..., None], cap_normal, side_normal)


def _random_material(rng: np.random.Generator) -> int:
    return int(rng.choice(len(MATERIALS), p=MATERIAL_PROBS))


def _albedo(rng: np.random.Generator, material: int) -> np.ndarray:
    colour = rng.uniform(0.3, 1.0, size=3)
    if material == DARK:
        colour = colour * rng.uniform(0.03, 0.09) / colour.mean()
    return colour


def render_scene(rng: np.random.Generator, size: int) -> dict[str, np.ndarray | int]:
    """One clean scene: depth, normal (H, W, 3), material, rgb (3, H, W), background depth, label."""
    rays = _rays(size)
    t_best, normal_best = _hit_plane(rays, rng.uniform(2.4, 3.3), rng.uniform(-0.6, 0.6), rng.uniform(-0.2, 1.0))
    t_best = np.where(t_best > 0, t_best, 50.0)
    background_depth = t_best * rays[..., 2]
    material = np.full(t_best.shape, BACKGROUND_MATERIAL)
    albedo = np.broadcast_to(_albedo(rng, MATTE), rays.shape).copy()
    label = int(rng.integers(len(SHAPES)))
    objects: list[tuple[str, float]] = [(SHAPES[label], rng.uniform(1.2, 2.4))]
    objects += [("box", rng.uniform(1.0, 2.6)) for _ in range(int(rng.integers(0, 3)))]
    for index, (shape, z) in enumerate(objects):
        spread = 0.12 if index == 0 else 0.35
        centre = np.array([rng.uniform(-spread, spread) * z, rng.uniform(-spread, spread) * z, z])
        scale = rng.uniform(0.22, 0.32) * z * (1.0 if index == 0 else 0.6)
        if shape == "sphere":
            t, normal = _hit_sphere(rays, centre, scale)
        elif shape == "cylinder":
            t, normal = _hit_cylinder(rays, centre, 0.8 * scale, scale * rng.uniform(0.9, 1.3))
        else:
            half = scale * rng.uniform(0.7, 1.1, size=3)
            t, normal = _hit_box(rays, centre - half, centre + half)
        closer = t < t_best
        t_best = np.where(closer, t, t_best)
        normal_best = np.where(closer[..., None], normal, normal_best)
        object_material = _random_material(rng)
        material = np.where(closer, object_material, material)
        albedo = np.where(closer[..., None], _albedo(rng, object_material), albedo)
    depth = t_best * rays[..., 2]
    view_cos = np.clip(-(normal_best * rays).sum(-1), 0.0, 1.0)
    lambert = np.clip((normal_best * -LIGHT).sum(-1), 0.0, 1.0)
    rgb = albedo * (0.3 + 0.7 * lambert)[..., None]
    half_vector = -LIGHT - rays
    half_vector /= np.linalg.norm(half_vector, axis=-1, keepdims=True)
    highlight = np.clip((normal_best * half_vector).sum(-1), 0.0, 1.0) ** 24
    rgb = np.where((material == SPECULAR)[..., None], rgb + 0.8 * highlight[..., None], rgb)
    behind = np.array([0.55, 0.6, 0.65]) * (0.3 + 0.7 * np.clip(background_depth / 5.0, 0, 1))[..., None]
    rgb = np.where((material == TRANSPARENT)[..., None], 0.7 * behind + 0.3 * np.array([0.4, 0.9, 1.0]), rgb)
    return {
        "depth": depth,
        "view_cos": view_cos,
        "material": material,
        "rgb": np.clip(rgb, 0.0, 1.0).transpose(2, 0, 1),
        "label": label,
    }


def discontinuities(depth: np.ndarray) -> np.ndarray:
    """(H, W) bool: pixels with a 4-neighbour whose depth differs by more than EDGE_JUMP × the nearer depth."""
    edge = np.zeros(depth.shape, dtype=bool)
    dx = np.abs(np.diff(depth, axis=1)) > EDGE_JUMP * np.minimum(depth[:, 1:], depth[:, :-1])
    dy = np.abs(np.diff(depth, axis=0)) > EDGE_JUMP * np.minimum(depth[1:, :], depth[:-1, :])
    edge[:, 1:] |= dx
    edge[:, :-1] |= dx
    edge[1:, :] |= dy
    edge[:-1, :] |= dy
    return edge


def stereo_shadow(depth: np.ndarray, baseline_focal: float = BASELINE_FOCAL, reach: int = 8) -> np.ndarray:
    """(H, W) bool: pixels the second camera (to the left) cannot see, hidden by a nearer surface on their left.

    Pixel u with disparity d(u) = bf / z is occluded when some u − k has d(u − k) − d(u) > k.
    """
    disparity = baseline_focal / np.maximum(depth, 1e-6)
    shadow = np.zeros(depth.shape, dtype=bool)
    for k in range(1, reach + 1):
        shadow[:, k:] |= disparity[:, :-k] - disparity[:, k:] > k
    return shadow


def sensor(rng: np.random.Generator, scene: dict[str, np.ndarray | int]) -> tuple[np.ndarray, np.ndarray]:
    """The oracle "real" capture of a clean scene: (depth with 0 where invalid, invalid mask)."""
    depth = np.asarray(scene["depth"])
    material = np.asarray(scene["material"])
    view_cos = np.asarray(scene["view_cos"])
    edge = discontinuities(depth)
    invalid = (
        (material == DARK)
        | ((material == SPECULAR) & (view_cos > np.cos(np.deg2rad(SPECULAR_ANGLE_DEG))))
        | (material == TRANSPARENT)
        | (depth > Z_MAX)
        | stereo_shadow(depth)
        | (edge & (rng.random(depth.shape) < EDGE_DROPOUT))
    )
    noisy = depth + rng.normal(size=depth.shape) * NOISE_K * depth**2
    flying = edge & (rng.random(depth.shape) < 0.6)
    neighbour = np.maximum.reduce([np.roll(depth, shift, axis) for shift in (1, -1) for axis in (0, 1)])
    blend = rng.random(depth.shape)
    noisy = np.where(flying, (1 - blend) * noisy + blend * neighbour, noisy)
    disparity = BASELINE_FOCAL / np.maximum(noisy, 1e-3)
    noisy = BASELINE_FOCAL / np.maximum(np.round(disparity / SUBPIXEL) * SUBPIXEL, SUBPIXEL)
    return np.where(invalid, 0.0, noisy), invalid


def make_batch(seed: int, count: int, size: int) -> Batch:
    """`count` scenes and their sensor captures, a function of (seed, count, size) only."""
    rng = np.random.default_rng(seed)
    fields: dict[str, list[np.ndarray | int]] = {k: [] for k in ("depth", "rgb", "normal_z", "material", "label",
                                                                  "real", "invalid")}
    for _ in range(count):
        scene = render_scene(rng, size)
        real, invalid = sensor(rng, scene)
        fields["depth"].append(np.asarray(scene["depth"]))
        fields["rgb"].append(np.asarray(scene["rgb"]))
        fields["normal_z"].append(np.asarray(scene["view_cos"]))
        fields["material"].append(np.asarray(scene["material"]))
        fields["label"].append(int(scene["label"]))
        fields["real"].append(real)
        fields["invalid"].append(invalid)
    return Batch(
        depth=np.stack(fields["depth"]).astype(np.float32),
        rgb=np.stack(fields["rgb"]).astype(np.float32),
        normal_z=np.stack(fields["normal_z"]).astype(np.float32),
        material=np.stack(fields["material"]).astype(np.int8),
        label=np.asarray(fields["label"], dtype=np.int64),
        real=np.stack(fields["real"]).astype(np.float32),
        invalid=np.stack(fields["invalid"]),
    )
