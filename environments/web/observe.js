// The observation text of a page: its accessibility tree with set-of-marks element ids (format: observe.py).
//
// Evaluated by observe.py as `(options) => string`. It renumbers the page: every visible actionable element
// gets `data-rg-id="N"` (N from 1, document order), stale marks are removed, and the text lists one element per
// line, indented two spaces per tree level. Structural containers (dialogs, menus, lists, toolbars, ...) and
// visible text get lines without ids. SVG is walked too: a shape or group with a click handler, a role, a
// tabindex or a link gets an id (its name from aria-label, a <title> child or its text) and its box; a shape
// (circle, ellipse, rect, polygon, polyline, path, line, text) also says what it looks like: `shape=<tag>
// fill=<colour> size=<w>x<h>` (a colour keyword the page wrote, else a common colour's name, else #rrggbb; CSS
// px), and the shapes of a drawing (an <svg> of at least 48x48 px) without handlers get lines without ids
// (`img "<title>" shape=... box=...`, at most maxShapes of them), so an agent reading text can tell a large
// red circle from a small blue square. A form
// control with no label, aria name, placeholder or title is named by the short text just before it (after it,
// for a checkbox or radio), as a person reads "Name [____]". `options`: maxChars (whole text), maxTextChars
// (one text line or value), maxTextTotal (all text lines together; the rest is summarized in one line),
// maxShapes (lines of shapes without handlers).
(options) => {
  const opts = Object.assign({maxChars: 12000, maxTextChars: 240, maxTextTotal: 6000, maxShapes: 60}, options || {});
  const ACTIONABLE = new Set([
    "link", "button", "textbox", "searchbox", "checkbox", "radio", "slider", "spinbutton", "combobox",
    "listbox", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "canvas",
    "treeitem", "gridcell",
  ]);
  const STRUCTURAL = new Set([
    "dialog", "alertdialog", "menu", "menubar", "toolbar", "list", "listitem", "tablist", "tabpanel",
    "heading", "navigation", "main", "region", "form", "group", "table", "row", "cell", "columnheader",
    "rowheader", "status", "alert", "tree", "grid", "banner", "contentinfo", "complementary", "search",
    "img", "progressbar", "timer", "log", "article", "figure", "radiogroup", "separator",
  ]);
  const LEAF_ROLES = new Set([
    "button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "option", "tab", "checkbox", "radio",
    "switch", "textbox", "searchbox", "slider", "spinbutton", "canvas", "gridcell", "treeitem",
  ]);
  const TEXT_ROLES = new Set(["heading", "cell", "columnheader", "rowheader", "status", "alert", "timer", "img"]);
  const INPUT_ROLES = {
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton", search: "searchbox",
    button: "button", submit: "button", reset: "button", image: "button", color: "button", file: "button",
  };
  const TAG_ROLES = {
    BUTTON: "button", TEXTAREA: "textbox", OPTION: "option", CANVAS: "canvas", SUMMARY: "button",
    NAV: "navigation", MAIN: "main", DIALOG: "dialog", UL: "list", OL: "list", LI: "listitem", TABLE: "table",
    TR: "row", TD: "cell", TH: "columnheader", H1: "heading", H2: "heading", H3: "heading", H4: "heading",
    H5: "heading", H6: "heading", FORM: "form", PROGRESS: "progressbar", HEADER: "banner", FOOTER: "contentinfo",
    ASIDE: "complementary", ARTICLE: "article", FIGURE: "figure", FIELDSET: "group", IMG: "img", HR: "separator",
    METER: "progressbar",
  };
  const SKIP_TAGS = new Set([
    "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "script", "style", "defs", "clipPath",
    "mask", "symbol", "title", "desc", "metadata", "marker", "linearGradient", "radialGradient", "pattern",
    "filter",
  ]);
  const CONTROLS = "input,select,textarea,button,[contenteditable],[role=textbox],[role=combobox]";
  const isSvg = (el) => el instanceof SVGElement;
  const clip = (text, limit) => (text.length > limit ? text.slice(0, limit - 1) + "…" : text);
  const squash = (text) => (text || "").replace(/\s+/g, " ").trim();
  const quote = (text) => JSON.stringify(text);
  const clickable = window.__raygentClickable || new WeakSet();
  // An element matching none of these, with none inside, is a block of plain text: one line.
  const INTERESTING = "a[href],button,input,select,textarea,option,canvas,[role],[tabindex],[contenteditable]," +
    "[onclick],[data-rg-click],h1,h2,h3,h4,h5,h6,ul,ol,li,table,dialog,nav,main,form,progress,img,details,summary";

  for (const old of document.querySelectorAll("[data-rg-id]")) old.removeAttribute("data-rg-id");

  // SVG shapes: what they look like, and which elements hold a drawing's shapes (so the walk goes into them).
  const SHAPE_TAGS = new Set(["circle", "ellipse", "rect", "polygon", "polyline", "path", "line", "text"]);
  const DRAWING_MIN_PX = 48;
  const COLOUR_NAMES = {
    "#000000": "black", "#ffffff": "white", "#ff0000": "red", "#008000": "green", "#00ff00": "lime",
    "#0000ff": "blue", "#ffff00": "yellow", "#00ffff": "cyan", "#ff00ff": "magenta", "#808080": "gray",
    "#c0c0c0": "silver", "#800000": "maroon", "#800080": "purple", "#808000": "olive", "#000080": "navy",
    "#008080": "teal", "#ffa500": "orange", "#ffc0cb": "pink", "#a52a2a": "brown", "#ffd700": "gold",
    "#4b0082": "indigo", "#ee82ee": "violet",
  };
  const isShape = (el) => el instanceof SVGElement && SHAPE_TAGS.has(el.tagName);
  const drawingOf = (el) => {
    let svg = el.ownerSVGElement;
    while (svg && svg.ownerSVGElement) svg = svg.ownerSVGElement;
    return svg;
  };
  const isDrawing = (svg) => {
    const r = svg ? svg.getBoundingClientRect() : null;
    return !!r && r.width >= DRAWING_MIN_PX && r.height >= DRAWING_MIN_PX;
  };
  const holdsShapes = new Set();
  const drawings = new Map();
  for (const shape of document.querySelectorAll(Array.from(SHAPE_TAGS, (tag) => "svg " + tag).join(","))) {
    const svg = drawingOf(shape);
    if (!drawings.has(svg)) drawings.set(svg, isDrawing(svg));
    if (!drawings.get(svg)) continue;
    let defined = false;  // inside <defs>, <clipPath>, <symbol>, ...: never drawn as it is
    for (let node = shape.parentElement; node && node !== svg && !defined; node = node.parentElement) {
      defined = SKIP_TAGS.has(node.tagName);
    }
    if (defined) continue;
    for (let node = shape.parentElement; node && !holdsShapes.has(node); node = node.parentElement) {
      holdsShapes.add(node);
    }
  }
  let paintProbe = null;
  const hexOf = (colour) => {  // a CSS colour as #rrggbb (or rgba(...) when not opaque), as a canvas writes it
    paintProbe = paintProbe || document.createElement("canvas").getContext("2d");
    if (!paintProbe) return colour;
    paintProbe.fillStyle = "#000000";
    paintProbe.fillStyle = colour;
    return String(paintProbe.fillStyle);
  };
  function paintOf(el, property) {
    const computed = getComputedStyle(el)[property] || "none";
    if (computed === "none") return "none";
    const ref = /^url\(["']?#([^"')]+)["']?\)/.exec(computed);
    if (ref) {
      const target = document.getElementById(ref[1]);
      return target && /gradient/i.test(target.tagName) ? "gradient" : "pattern";
    }
    const hex = hexOf(computed);
    if (/^rgba\(.*,\s*0\)$/.test(hex)) return "transparent";
    const written = (el.style.getPropertyValue(property) || el.getAttribute(property) || "").trim().toLowerCase();
    if (/^[a-z]+$/.test(written) && hexOf(written) === hex) return written;
    return COLOUR_NAMES[hex] || hex.replace(/\s+/g, "");
  }
  function shapeOf(el) {
    const tag = el.tagName;
    const fill = paintOf(el, "fill");
    let text = `shape=${tag}`;
    if (tag !== "line") text += ` fill=${fill}`;
    if (tag === "line" || fill === "none" || fill === "transparent") {
      const stroke = paintOf(el, "stroke");
      if (stroke !== "none") text += ` stroke=${stroke}`;
    }
    const r = el.getBoundingClientRect();
    return `${text} size=${Math.round(r.width)}x${Math.round(r.height)}`;
  }
  let shapesShown = 0;
  let shapesDropped = 0;

  function roleOf(el) {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (explicit && explicit !== "presentation" && explicit !== "none") return explicit;
    const tag = el.tagName;
    if (tag === "A" || (tag === "a" && isSvg(el))) return el.hasAttribute("href") ? "link" : "";
    if (tag === "INPUT") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      return type === "hidden" ? "" : INPUT_ROLES[type] || "textbox";
    }
    if (tag === "SELECT") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (tag in TAG_ROLES) return TAG_ROLES[tag];
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return "textbox";
    if (clickable.has(el) || el.hasAttribute("onclick") || el.hasAttribute("data-rg-click")) return "generic";
    if (el.tabIndex >= 0 && el.hasAttribute("tabindex")) return "generic";
    return "";
  }

  function isActionable(el, role) {
    if (ACTIONABLE.has(role)) return true;
    if (role === "generic" || STRUCTURAL.has(role)) {
      const handler = clickable.has(el) || el.hasAttribute("onclick") || el.hasAttribute("data-rg-click");
      return (handler || (el.hasAttribute("tabindex") && el.tabIndex >= 0))
        && el !== document.body && el !== document.documentElement;
    }
    return false;
  }

  function visible(el) {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return false;
    if (el.tagName === "OPTION") return true;
    const style = getComputedStyle(el);
    if (style.display === "contents") return true;
    if (!el.checkVisibility({visibilityProperty: true})) return false;
    const rect = el.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0;
  }

  function labelText(el) {
    const ids = el.getAttribute("aria-labelledby");
    if (ids) {
      const text = ids.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean)
        .map((n) => squash(n.textContent)).join(" ");
      if (text) return text;
    }
    const aria = squash(el.getAttribute("aria-label"));
    if (aria) return aria;
    if (el.labels && el.labels.length) {
      // A wrapping label's text without the control's own text (a select's options, say).
      const own = (label) => Array.from(label.childNodes)
        .filter((node) => node !== el && !(node.contains && node.contains(el))).map((node) => node.textContent);
      return squash(Array.from(el.labels).flatMap(own).join(" "));
    }
    return "";
  }

  function textOf(node) {
    if (node.nodeType === Node.TEXT_NODE) return squash(node.textContent);
    return squash(node.innerText === undefined ? node.textContent : node.innerText);
  }

  // The short text right before a control (right after, for a checkbox or radio): its label by proximity.
  function nearbyText(el, after) {
    let node = el;
    for (let level = 0; level < 3 && node && node !== document.body; level++) {
      for (let sib = after ? node.nextSibling : node.previousSibling; sib;
        sib = after ? sib.nextSibling : sib.previousSibling) {
        if (sib.nodeType === Node.ELEMENT_NODE) {
          if (SKIP_TAGS.has(sib.tagName)) continue;
          if (sib.matches(CONTROLS) || sib.querySelector(CONTROLS) || !visible(sib)) return "";
        } else if (sib.nodeType !== Node.TEXT_NODE) {
          continue;
        }
        const text = textOf(sib);
        if (text) return text.length <= 80 ? text.replace(/\s*[:：]\s*$/, "") : "";
      }
      node = node.parentElement;  // a wrapper holding only this control: look beside the wrapper
      if (!node || node.querySelectorAll(CONTROLS).length > 1) return "";
    }
    return "";
  }

  function nameOf(el, role) {
    const label = labelText(el);
    if (label) return label;
    const tag = el.tagName;
    if (isSvg(el)) {
      const title = Array.from(el.children).find((child) => child.tagName === "title");
      return clip(squash((title && title.textContent) || el.textContent || ""), opts.maxTextChars);
    }
    if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) && !el.getAttribute("placeholder") && !el.title) {
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (type !== "hidden" && !["button", "submit", "reset", "image"].includes(type)) {
        const after = type === "checkbox" || type === "radio";
        const near = nearbyText(el, after) || (after ? nearbyText(el, false) : "");
        if (near) return clip(near, opts.maxTextChars);
      }
    }
    if (tag === "INPUT" && ["button", "submit", "reset"].includes((el.type || "").toLowerCase())) return el.value;
    if (tag === "IMG") return squash(el.alt || el.title);
    if (tag === "OPTION") return squash(el.label || el.textContent);
    if (["textbox", "searchbox", "combobox", "listbox", "slider", "spinbutton", "canvas"].includes(role)) {
      return squash(el.getAttribute("placeholder") || el.title || "");
    }
    if (STRUCTURAL.has(role) && !TEXT_ROLES.has(role)) return squash(el.title || "");
    return clip(squash(el.innerText || el.textContent || el.title || ""), opts.maxTextChars);
  }

  function valueOf(el, role) {
    const tag = el.tagName;
    if (tag === "SELECT") return Array.from(el.selectedOptions).map((o) => squash(o.label || o.text)).join(", ");
    if (tag === "INPUT" && ["checkbox", "radio", "button", "submit", "reset"].includes(el.type)) return null;
    if (tag === "INPUT" || tag === "TEXTAREA") return el.value;
    if (role === "textbox" && el.isContentEditable) return el.innerText.replace(/\n$/, "");
    const now = el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow");
    if (now !== null && ["slider", "spinbutton", "progressbar", "scrollbar"].includes(role)) return now;
    if (tag === "PROGRESS" || tag === "METER") return String(el.value);
    return null;
  }

  function flagsOf(el, role) {
    const flags = [];
    const aria = (name) => el.getAttribute(name);
    if (el.checked === true || aria("aria-checked") === "true" || aria("aria-pressed") === "true") {
      flags.push("checked");
    }
    if ((el.tagName === "OPTION" && el.selected) || aria("aria-selected") === "true" || aria("aria-current")
        && aria("aria-current") !== "false") {
      flags.push("selected");
    }
    if (aria("aria-expanded") === "true" || (el.tagName === "DETAILS" && el.open)) flags.push("expanded");
    if (el.disabled === true || aria("aria-disabled") === "true") flags.push("disabled");
    if (document.activeElement === el && el !== document.body) flags.push("focused");
    return flags;
  }

  function boxOf(el) {
    const rect = el.getBoundingClientRect();
    const w = window.innerWidth, h = window.innerHeight;
    const g = (v, size) => Math.max(0, Math.min(1000, Math.round((v / size) * 1000)));
    return `box=(${g(rect.left, w)},${g(rect.top, h)},${g(rect.right, w)},${g(rect.bottom, h)})`;
  }

  const lines = [];
  let nextId = 1;
  let textUsed = 0;
  let textDropped = 0;

  function emitText(text, depth) {
    text = squash(text);
    if (!text) return;
    if (textUsed + text.length > opts.maxTextTotal) {
      textDropped += text.length;
      return;
    }
    const line = clip(text, opts.maxTextChars);
    textUsed += line.length;
    lines.push(`${"  ".repeat(depth)}text ${quote(line)}`);
  }

  function emitChildren(el, depth) {
    for (const child of el.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) emitText(child.textContent, depth);
      else if (child.nodeType === Node.ELEMENT_NODE) walk(child, depth);
    }
  }

  function walk(el, depth) {
    // The body is walked even when it has no height of its own (a page of absolutely positioned elements).
    if (SKIP_TAGS.has(el.tagName) || (el !== document.body && !visible(el))) return;
    const role = roleOf(el);
    const pad = "  ".repeat(depth);
    const nested = el.querySelector(INTERESTING) !== null || holdsShapes.has(el);
    if (isActionable(el, role)) {
      const id = nextId++;
      el.setAttribute("data-rg-id", String(id));
      const container = !LEAF_ROLES.has(role) && nested;
      const name = container ? labelText(el) || squash(el.title || "") : nameOf(el, role);
      let line = `${pad}[${id}] ${role} ${quote(name)}`;
      const value = valueOf(el, role);
      if (value !== null && value !== undefined) line += ` value=${quote(clip(String(value), opts.maxTextChars * 2))}`;
      const flags = flagsOf(el, role);
      if (flags.length) line += " " + flags.join(" ");
      if (isShape(el)) line += " " + shapeOf(el);
      if (role === "canvas" || isSvg(el)) line += " " + boxOf(el);
      lines.push(line);
      if (container || el.tagName === "SELECT") emitChildren(el, depth + 1);
      return;
    }
    if (!role && isShape(el) && drawings.get(drawingOf(el))) {  // a drawing's shape without a handler
      if (shapesShown >= opts.maxShapes) {
        shapesDropped += 1;
        return;
      }
      shapesShown += 1;
      const tag = el.tagName;
      const name = tag === "text" ? clip(squash(el.textContent), opts.maxTextChars) : nameOf(el, "img");
      lines.push(`${pad}${tag === "text" ? "text" : "img"} ${quote(name)} ${shapeOf(el)} ${boxOf(el)}`);
      return;
    }
    if (!role && !nested) {
      emitText(el.innerText === undefined ? el.textContent : el.innerText, depth);
      return;
    }
    let childDepth = depth;
    if (STRUCTURAL.has(role)) {
      const name = nameOf(el, role);
      const flags = flagsOf(el, role).filter((f) => f !== "focused");
      let line = `${pad}${role}`;
      if (name) line += ` ${quote(name)}`;
      const value = valueOf(el, role);
      if (value !== null && value !== undefined) line += ` value=${quote(String(value))}`;
      if (flags.length) line += " " + flags.join(" ");
      if (isShape(el)) line += ` ${shapeOf(el)} ${boxOf(el)}`;
      lines.push(line);
      childDepth = depth + 1;
      if (TEXT_ROLES.has(role) && !nested) return;
    }
    emitChildren(el, childDepth);
  }

  if (document.body) walk(document.body, 0);
  if (textDropped) lines.push(`text ${quote(`… ${textDropped} more characters of text not shown`)}`);
  if (shapesDropped) lines.push(`text ${quote(`… ${shapesDropped} more shapes not shown`)}`);
  let text = lines.join("\n");
  if (text.length > opts.maxChars) {
    text = text.slice(0, text.lastIndexOf("\n", opts.maxChars)) + `\ntext ${quote("… observation truncated")}`;
  }
  return text;
}
