/* editing.js: the code editor's text operations as pure functions over (text, selection).
   Each returns `{text, start, end}`: the new text and the selection to show afterwards. */

/** The comment prefix for a file name (`//` for .js/.json, `#` otherwise). */
export function commentPrefix(path) {
  return /\.(js|json|ts)$/.test(path) ? '//' : '#';
}

/** Start offset of each line. */
function lineStarts(text) {
  const starts = [0];
  for (let k = 0; k < text.length; k += 1) if (text[k] === '\n') starts.push(k + 1);
  return starts;
}

/** 0-based line index containing offset. */
export function lineOf(text, offset) {
  return text.slice(0, offset).split('\n').length - 1;
}

/** The lines a selection touches, as [first, last] 0-based indices (a selection ending at a line start
    does not touch that line, as in VS Code). */
function touched(text, start, end) {
  const first = lineOf(text, start);
  let last = lineOf(text, end);
  if (end > start && last > first && lineStarts(text)[last] === end) last -= 1;
  return [first, last];
}

/** Replace lines first..last with `replacement` lines; the selection covers the new lines. */
function replaceLines(text, first, last, replacement) {
  const lines = text.split('\n');
  lines.splice(first, last - first + 1, ...replacement);
  const out = lines.join('\n');
  const starts = lineStarts(out);
  const start = starts[Math.min(first, starts.length - 1)];
  const endLine = Math.min(first + replacement.length - 1, starts.length - 1);
  const end = replacement.length ? starts[endLine] + lines[endLine].length : start;
  return {text: out, start, end};
}

/** Comment the touched lines out, or uncomment them when every non-blank one is a comment. */
export function toggleComment(text, start, end, prefix = '#') {
  const [first, last] = touched(text, start, end);
  const lines = text.split('\n').slice(first, last + 1);
  const nonBlank = lines.filter((l) => l.trim());
  const commented = nonBlank.length > 0 && nonBlank.every((l) => l.trimStart().startsWith(prefix));
  const out = lines.map((line) => {
    if (!line.trim()) return line;
    const indent = line.length - line.trimStart().length;
    const body = line.slice(indent);
    if (commented) return line.slice(0, indent) + body.slice(prefix.length).replace(/^ /, '');
    return `${line.slice(0, indent)}${prefix} ${body}`;
  });
  return replaceLines(text, first, last, out);
}

/** Copy the touched lines below themselves. */
export function duplicateLines(text, start, end) {
  const [first, last] = touched(text, start, end);
  const lines = text.split('\n').slice(first, last + 1);
  const result = replaceLines(text, first, last, [...lines, ...lines]);
  const starts = lineStarts(result.text);
  const copyStart = starts[first + lines.length];
  return {text: result.text, start: copyStart, end: copyStart};
}

/** Remove the touched lines; the cursor goes to the start of the line that follows. */
export function deleteLines(text, start, end) {
  const [first, last] = touched(text, start, end);
  const lines = text.split('\n');
  lines.splice(first, last - first + 1);
  const out = lines.join('\n');
  const starts = lineStarts(out);
  const cursor = starts[Math.min(first, starts.length - 1)];
  return {text: out, start: cursor, end: cursor};
}

/** Sort the touched lines (all lines when the selection is empty), by code point like VS Code. */
export function sortLines(text, start, end) {
  const lines = text.split('\n');
  let [first, last] = start === end ? [0, lines.length - 1] : touched(text, start, end);
  if (start === end && lines[last] === '' && last > 0) last -= 1;
  const sorted = lines.slice(first, last + 1).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return replaceLines(text, first, last, sorted);
}

/** Upper-case the selection. */
export function upperCase(text, start, end) {
  return {text: text.slice(0, start) + text.slice(start, end).toUpperCase() + text.slice(end), start, end};
}

/** Remove trailing spaces and tabs from every line. */
export function trimTrailing(text, start) {
  const out = text.split('\n').map((l) => l.replace(/[ \t]+$/, '')).join('\n');
  const cursor = Math.min(start, out.length);
  return {text: out, start: cursor, end: cursor};
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The regular expression a find query means. */
export function queryPattern(query, {matchCase = false, wholeWord = false} = {}) {
  const body = escapeRegExp(query);
  return new RegExp(wholeWord ? `(?<![\\w])${body}(?![\\w])` : body, matchCase ? 'g' : 'gi');
}

/** All matches of a query as [start, end] pairs. */
export function findAll(text, query, options = {}) {
  if (!query) return [];
  return [...text.matchAll(queryPattern(query, options))].map((m) => [m.index, m.index + m[0].length]);
}

/** Replace every match; `count` says how many. */
export function replaceAll(text, query, replacement, options = {}) {
  const matches = findAll(text, query, options);
  if (!matches.length) return {text, count: 0};
  return {text: text.replace(queryPattern(query, options), () => replacement), count: matches.length};
}

/** Offset of the start of a 1-based line number (clamped to the text). */
export function lineOffset(text, lineNumber) {
  const starts = lineStarts(text);
  return starts[Math.max(0, Math.min(starts.length - 1, lineNumber - 1))];
}

/** Indent (or, with `outdent`, dedent) the touched lines by one tab stop. */
export function indentLines(text, start, end, unit, outdent = false) {
  const [first, last] = touched(text, start, end);
  const lines = text.split('\n').slice(first, last + 1);
  const width = unit === '\t' ? 1 : unit.length;
  const out = lines.map((line) => {
    if (!outdent) return unit + line;
    const match = /^(\t| +)/.exec(line);
    if (!match) return line;
    return line.slice(match[0].startsWith('\t') ? 1 : Math.min(width, match[0].length));
  });
  return replaceLines(text, first, last, out);
}
