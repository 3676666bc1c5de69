"""Procedural rooms ray-cast from two cameras: the source view, a target view at camera distance d, and the geometry
that links them (depth-based forward warp, Plücker rays of the target in the source frame).

A room is a closed box (floor, ceiling, four walls) holding 3–6 axis-aligned furniture boxes whose size and colour
follow their category (bed, table, cabinet, lamp). Every pixel of a render carries an RGB value (flat colour times
a Lambertian shading term), its semantic category and its distance along the ray.

The source camera stands near the front wall looking into the room. The target camera orbits the room's centre by
an angle θ = ±d·`MAX_ORBIT` and steps d·`MAX_STEP` toward it, so d ∈ [0, 1] is the camera distance the study sweeps:
at d = 0 the views coincide; at d = 1 most of the target shows surfaces the source never saw.

`warp_index` is forward splatting with a z-buffer: every source pixel is unprojected with its depth, moved into the
target camera and written to the nearest target pixel; the closest one wins. A target pixel nobody lands on is a
hole (−1), which the warped semantic features cannot fill. The source is splatted from a 2× supersampled depth
render, so only disocclusions and the parts outside the source's view are holes, not magnification cracks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOOR, WALL, CEILING, BED, TABLE, CABINET, LAMP = range(7)
CATEGORIES = ("floor", "wall", "ceiling", "bed", "table", "cabinet", "lamp")
N_CLASSES = len(CATEGORIES)
# furniture: (width, height, depth) means in metres and the base colour (RGB in [0, 1])
FURNITURE = {
    BED: ((1.6, 0.5, 2.0), (0.75, 0.2, 0.2)),
    TABLE: ((1.0, 0.75, 0.9), (0.55, 0.35, 0.15)),
    CABINET: ((0.7, 1.8, 0.5), (0.2, 0.3, 0.7)),
    LAMP: ((0.3, 1.5, 0.3), (0.95, 0.85, 0.2)),
}
HALF_WIDTH, DEPTH, HEIGHT = 2.5, 6.0, 2.6  # room: x in [-2.5, 2.5], z in [0, 6], y in [0, 2.6]
CENTRE = np.array([0.0, 1.2, 3.0])
EYE_HEIGHT = 1.2
FOV_DEG = 70.0
MAX_ORBIT = np.deg2rad(60.0)
MAX_STEP = 1.0
WARP_SUPERSAMPLE = 2
LIGHT = np.array([0.3, 0.8, -0.5]) / np.linalg.norm([0.3, 0.8, -0.5])


@dataclass(frozen=True)
class Room:
    floor: np.ndarray  # (3,) colours
    wall: np.ndarray
    ceiling: np.ndarray
    box_lo: np.ndarray  # (B, 3) box corners
    box_hi: np.ndarray
    box_category: np.ndarray  # (B,)
    box_colour: np.ndarray  # (B, 3)


@dataclass(frozen=True)
class Camera:
    position: np.ndarray  # (3,)
    yaw: float  # radians about +y; 0 looks along +z

    def rotation(self) -> np.ndarray:
        """Camera-to-world rotation: columns are the camera's right, up and forward axes."""
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


@dataclass(frozen=True)
class Render:
    rgb: np.ndarray  # (3, S, S) in [0, 1]
    category: np.ndarray  # (S, S) int
    depth: np.ndarray  # (S, S) distance along the ray
    points: np.ndarray  # (S, S, 3) world points


@dataclass(frozen=True)
class Pairs:
    """N (source, target) view pairs: float32 arrays ready for torch."""

    source: np.ndarray  # (N, 3, S, S) in [0, 1]
    target: np.ndarray  # (N, 3, S, S)
    source_category: np.ndarray  # (N, S, S) int64
    target_category: np.ndarray  # (N, S, S)
    warp: np.ndarray  # (N, S*S) int64: source pixel index landing on each target pixel, −1 for a hole
    rays: np.ndarray  # (N, 6, S, S) Plücker coordinates of the target rays in the source camera frame
    distance: np.ndarray  # (N,) camera distance d

    def __len__(self) -> int:
        return len(self.source)

    @property
    def hole(self) -> np.ndarray:
        """(N, S, S) bool: target pixels no source pixel lands on."""
        size = self.source.shape[-1]
        return (self.warp < 0).reshape(-1, size, size)


def make_room(rng: np.random.Generator) -> Room:
    floor = rng.uniform([0.35, 0.25, 0.15], [0.6, 0.45, 0.3])
    wall = rng.uniform(0.55, 0.9, size=3)
    ceiling = np.full(3, rng.uniform(0.85, 1.0))
    n = int(rng.integers(3, 7))
    categories = rng.choice([BED, TABLE, CABINET, LAMP], size=n)
    lo, hi, colours = [], [], []
    for category in categories:
        (w, h, d), colour = FURNITURE[int(category)]
        size = np.array([w, h, d]) * rng.uniform(0.8, 1.2, size=3)
        if rng.random() < 0.5:
            size[[0, 2]] = size[[2, 0]]  # rotated by 90 degrees
        x = rng.uniform(-HALF_WIDTH + size[0] / 2, HALF_WIDTH - size[0] / 2)
        z = rng.uniform(1.8 + size[2] / 2, DEPTH - size[2] / 2)
        lo.append([x - size[0] / 2, 0.0, z - size[2] / 2])
        hi.append([x + size[0] / 2, size[1], z + size[2] / 2])
        colours.append(np.clip(np.array(colour) + rng.normal(0.0, 0.06, size=3), 0.0, 1.0))
    return Room(floor, wall, ceiling, np.array(lo), np.array(hi), categories.astype(np.int64), np.array(colours))


def ray_directions(camera: Camera, size: int) -> np.ndarray:
    """(S, S, 3) unit world directions of the pixel centres; row 0 is the top of the image."""
    focal = 0.5 * size / np.tan(np.deg2rad(FOV_DEG) / 2)
    coords = np.arange(size) + 0.5 - size / 2
    u, v = np.meshgrid(coords, coords)
    local = np.stack([u, -v, np.full_like(u, focal)], axis=-1)
    local /= np.linalg.norm(local, axis=-1, keepdims=True)
    return local @ camera.rotation().T


def render(room: Room, camera: Camera, size: int) -> Render:
    """Ray-cast the room: nearest hit over the six room planes and every box (slab test)."""
    direction = ray_directions(camera, size).reshape(-1, 3)
    origin = camera.position
    n = len(direction)
    best = np.full(n, np.inf)
    category = np.zeros(n, dtype=np.int64)
    colour = np.zeros((n, 3))
    normal = np.zeros((n, 3))
    with np.errstate(divide="ignore", invalid="ignore"):
        planes = ((1, 0.0, FLOOR, room.floor), (1, HEIGHT, CEILING, room.ceiling),
                  (0, -HALF_WIDTH, WALL, room.wall), (0, HALF_WIDTH, WALL, room.wall),
                  (2, 0.0, WALL, room.wall), (2, DEPTH, WALL, room.wall))
        for axis, offset, cat, col in planes:
            t = (offset - origin[axis]) / direction[:, axis]
            hit = (t > 1e-6) & (t < best)
            best[hit] = t[hit]
            category[hit] = cat
            colour[hit] = col
            unit = np.zeros(3)
            unit[axis] = 1.0
            normal[hit] = unit
        for b in range(len(room.box_category)):
            t1 = (room.box_lo[b] - origin) / direction
            t2 = (room.box_hi[b] - origin) / direction
            near = np.minimum(t1, t2)
            t_in, face = near.max(axis=1), near.argmax(axis=1)
            t_out = np.maximum(t1, t2).min(axis=1)
            hit = (t_in <= t_out) & (t_in > 1e-6) & (t_in < best)
            best[hit] = t_in[hit]
            category[hit] = room.box_category[b]
            colour[hit] = room.box_colour[b]
            normal[hit] = np.eye(3)[face[hit]]
    shade = 0.55 + 0.45 * np.abs(normal @ LIGHT)
    rgb = np.clip(colour * shade[:, None], 0.0, 1.0)
    points = origin + best[:, None] * direction
    return Render(rgb.T.reshape(3, size, size), category.reshape(size, size), best.reshape(size, size),
                  points.reshape(size, size, 3))


def source_camera(rng: np.random.Generator) -> Camera:
    position = np.array([rng.uniform(-0.6, 0.6), EYE_HEIGHT, rng.uniform(0.3, 0.8)])
    return Camera(position, float(rng.uniform(-0.15, 0.15)))


def target_camera(source: Camera, distance: float, sign: float) -> Camera:
    """Orbit the room's centre by sign·d·MAX_ORBIT, then step d·MAX_STEP toward it; the yaw turns with the orbit."""
    angle = sign * distance * MAX_ORBIT
    c, s = np.cos(angle), np.sin(angle)
    offset = source.position - CENTRE
    rotated = np.array([c * offset[0] + s * offset[2], offset[1], -s * offset[0] + c * offset[2]])
    position = CENTRE + rotated
    towards = CENTRE - position
    towards[1] = 0.0
    position = position + distance * MAX_STEP * towards / max(np.linalg.norm(towards), 1e-6)
    position[0] = np.clip(position[0], -HALF_WIDTH + 0.2, HALF_WIDTH - 0.2)
    position[2] = np.clip(position[2], 0.2, DEPTH - 0.2)
    return Camera(position, source.yaw + angle)


def warp_index(points: np.ndarray, target: Camera, size: int) -> np.ndarray:
    """(S*S,) for each target pixel the index of the nearest source pixel splatted onto it, or −1.

    `points` are the source's world points at k× the image resolution ((kS, kS, 3), k ≥ 1): each sub-pixel sample
    splats its parent pixel, so a source pixel covers its footprint and magnification leaves no cracks.
    """
    factor = points.shape[0] // size
    fine = np.arange(points.shape[0]) // factor
    parent = (fine[:, None] * size + fine[None, :]).reshape(-1)
    local = (points.reshape(-1, 3) - target.position) @ target.rotation()
    focal = 0.5 * size / np.tan(np.deg2rad(FOV_DEG) / 2)
    z = local[:, 2]
    front = z > 1e-3
    safe = np.where(front, z, 1.0)
    col = np.floor(focal * local[:, 0] / safe + size / 2).astype(np.int64)
    row = np.floor(-focal * local[:, 1] / safe + size / 2).astype(np.int64)
    inside = front & (col >= 0) & (col < size) & (row >= 0) & (row < size)
    source = np.flatnonzero(inside)
    pixel = row[source] * size + col[source]
    order = np.lexsort((z[source], pixel))  # by target pixel, nearest first
    pixel, source = pixel[order], source[order]
    first = np.ones(len(pixel), dtype=bool)
    first[1:] = pixel[1:] != pixel[:-1]
    index = np.full(size * size, -1, dtype=np.int64)
    index[pixel[first]] = parent[source[first]]
    return index


def plucker(source: Camera, target: Camera, size: int) -> np.ndarray:
    """(6, S, S) Plücker coordinates (d, o × d) of the target's pixel rays, expressed in the source camera frame."""
    to_source = source.rotation().T
    direction = ray_directions(target, size).reshape(-1, 3) @ to_source.T
    origin = to_source @ (target.position - source.position)
    moment = np.cross(np.broadcast_to(origin, direction.shape), direction)
    return np.concatenate([direction, moment], axis=1).T.reshape(6, size, size)


def make_pairs(seed: int, n: int, size: int, distances: np.ndarray | None = None) -> Pairs:
    """`n` pairs from `n` new rooms; camera distance uniform in [0, 1] or the given `distances` (length n)."""
    rng = np.random.default_rng(seed)
    fields: dict[str, list[np.ndarray]] = {k: [] for k in ("source", "target", "source_category",
                                                          "target_category", "warp", "rays")}
    dist = rng.uniform(0.0, 1.0, size=n) if distances is None else np.asarray(distances, dtype=np.float64)
    for i in range(n):
        room = make_room(rng)
        src_cam = source_camera(rng)
        tgt_cam = target_camera(src_cam, float(dist[i]), 1.0 if rng.random() < 0.5 else -1.0)
        src, tgt = render(room, src_cam, size), render(room, tgt_cam, size)
        fields["source"].append(src.rgb)
        fields["target"].append(tgt.rgb)
        fields["source_category"].append(src.category)
        fields["target_category"].append(tgt.category)
        fine = render(room, src_cam, size * WARP_SUPERSAMPLE)
        fields["warp"].append(warp_index(fine.points, tgt_cam, size))
        fields["rays"].append(plucker(src_cam, tgt_cam, size))
    return Pairs(
        source=np.stack(fields["source"]).astype(np.float32),
        target=np.stack(fields["target"]).astype(np.float32),
        source_category=np.stack(fields["source_category"]),
        target_category=np.stack(fields["target_category"]),
        warp=np.stack(fields["warp"]),
        rays=np.stack(fields["rays"]).astype(np.float32),
        distance=dist.astype(np.float32),
    )
