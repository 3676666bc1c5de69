// Pixel operations on RGBA layers ({width, height, data: Uint8ClampedArray}): tools and filters.
// Everything is integer and deterministic (no antialiasing), so `raster.py` can reproduce the results for checkers.

/** '#rrggbb' -> [r, g, b, 255]. */
export function parseHex(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(String(hex).trim());
  if (!m) return null;
  const v = parseInt(m[1], 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255, 255];
}

export function toHex(r, g, b, a) {
  const h = (n) => n.toString(16).padStart(2, '0');
  return '#' + h(r) + h(g) + h(b) + (a === undefined ? '' : h(a));
}

/** Round half up, the rule `raster.py` uses too. */
export function roundHalfUp(sum, count) {
  return Math.floor((2 * sum + count) / (2 * count));
}

export function blankLayerData(width, height, color) {
  const data = new Uint8ClampedArray(width * height * 4);
  if (color) for (let i = 0; i < data.length; i += 4) data.set(color, i);
  return data;
}

function setPixel(layer, x, y, rgba) {
  if (x < 0 || y < 0 || x >= layer.width || y >= layer.height) return;
  layer.data.set(rgba, (y * layer.width + x) * 4);
}

/** Filled rectangle between two corner pixels, both inclusive. */
export function fillRect(layer, x0, y0, x1, y1, rgba) {
  for (let y = Math.min(y0, y1); y <= Math.max(y0, y1); y++) {
    for (let x = Math.min(x0, x1); x <= Math.max(x0, x1); x++) setPixel(layer, x, y, rgba);
  }
}

/** A round stamp of diameter `size` centred on (cx, cy): the pixels whose centres lie within size/2. */
export function stamp(layer, cx, cy, size, rgba) {
  const r = size / 2;
  const reach = Math.ceil(r);
  for (let dy = -reach; dy <= reach; dy++) {
    for (let dx = -reach; dx <= reach; dx++) {
      if (size <= 1 ? dx === 0 && dy === 0 : dx * dx + dy * dy <= r * r) setPixel(layer, cx + dx, cy + dy, rgba);
    }
  }
}

/** Stamp along the Bresenham line from (x0, y0) to (x1, y1). */
export function strokeLine(layer, x0, y0, x1, y1, size, rgba) {
  const dx = Math.abs(x1 - x0), dy = -Math.abs(y1 - y0);
  const sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  let err = dx + dy;
  for (;;) {
    stamp(layer, x0, y0, size, rgba);
    if (x0 === x1 && y0 === y1) return;
    const e2 = 2 * err;
    if (e2 >= dy) { err += dy; x0 += sx; }
    if (e2 <= dx) { err += dx; y0 += sy; }
  }
}

/** 4-connected flood fill of the region of exactly the clicked pixel's RGBA. Returns the pixels changed. */
export function floodFill(layer, x, y, rgba) {
  const { width, height, data } = layer;
  if (x < 0 || y < 0 || x >= width || y >= height) return 0;
  const start = (y * width + x) * 4;
  const target = Array.from(data.slice(start, start + 4));
  if (target.every((v, i) => v === rgba[i])) return 0;
  const same = (p) => data[p] === target[0] && data[p + 1] === target[1] && data[p + 2] === target[2]
    && data[p + 3] === target[3];
  const stack = [[x, y]];
  let changed = 0;
  while (stack.length) {
    const [px, py] = stack.pop();
    if (px < 0 || py < 0 || px >= width || py >= height) continue;
    const p = (py * width + px) * 4;
    if (!same(p)) continue;
    data.set(rgba, p);
    changed++;
    stack.push([px + 1, py], [px - 1, py], [px, py + 1], [px, py - 1]);
  }
  return changed;
}

// ---- filters: each maps a layer's data in place; alpha is kept --------------------------------------------

export function invert(layer) {
  const d = layer.data;
  for (let i = 0; i < d.length; i += 4) { d[i] = 255 - d[i]; d[i + 1] = 255 - d[i + 1]; d[i + 2] = 255 - d[i + 2]; }
}

/** Luma in integer arithmetic: (299 r + 587 g + 114 b + 500) / 1000, floored. */
export function grayscale(layer) {
  const d = layer.data;
  for (let i = 0; i < d.length; i += 4) {
    const y = Math.floor((299 * d[i] + 587 * d[i + 1] + 114 * d[i + 2] + 500) / 1000);
    d[i] = d[i + 1] = d[i + 2] = y;
  }
}

/** Add round(255 * amount / 100) to each color channel, clamped to 0..255. */
export function brightness(layer, amount) {
  const delta = Math.floor((255 * amount * 2 + 100) / 200);
  const d = layer.data;
  for (let i = 0; i < d.length; i += 4) {
    for (let c = 0; c < 3; c++) d[i + c] = Math.max(0, Math.min(255, d[i + c] + delta));
  }
}

function blurPass(src, width, height, radius, horizontal) {
  const out = new Uint8ClampedArray(src.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sums = [0, 0, 0, 0];
      let count = 0;
      for (let k = -radius; k <= radius; k++) {
        const sx = horizontal ? x + k : x, sy = horizontal ? y : y + k;
        if (sx < 0 || sy < 0 || sx >= width || sy >= height) continue;
        const p = (sy * width + sx) * 4;
        for (let c = 0; c < 4; c++) sums[c] += src[p + c];
        count++;
      }
      const q = (y * width + x) * 4;
      for (let c = 0; c < 4; c++) out[q + c] = roundHalfUp(sums[c], count);
    }
  }
  return out;
}

/** Separable box blur of the given radius (window 2r+1, shrunk at the edges), all four channels. */
export function blur(layer, radius) {
  const h = blurPass(layer.data, layer.width, layer.height, radius, true);
  layer.data = blurPass(h, layer.width, layer.height, radius, false);
}

/** Mirror left to right. */
export function flipHorizontal(layer) {
  const { width, height, data } = layer;
  const out = new Uint8ClampedArray(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4, q = (y * width + (width - 1 - x)) * 4;
      out.set(data.subarray(p, p + 4), q);
    }
  }
  layer.data = out;
}

/** Copy the rectangle (left, top, width, height) of a layer into a new data array (outside: transparent). */
export function cropData(layer, left, top, width, height) {
  const out = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sx = x + left, sy = y + top;
      if (sx < 0 || sy < 0 || sx >= layer.width || sy >= layer.height) continue;
      const p = (sy * layer.width + sx) * 4;
      out.set(layer.data.subarray(p, p + 4), (y * width + x) * 4);
    }
  }
  return out;
}
