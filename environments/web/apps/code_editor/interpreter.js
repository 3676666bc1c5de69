/* interpreter.js: "Mini", the small language the code editor runs (no eval, no host access).

   Statements, one per line (a `#` starts a comment):
     let NAME = EXPR        NAME = EXPR        print EXPR[, EXPR...]
     if EXPR / else / end   while EXPR / end   repeat EXPR / end
   Expressions: numbers, "strings", true/false, names, ( ), unary -, not, * / %, + -, == != < <= > >=, and, or,
   and the functions len, upper, lower, str, num, round, abs, min, max. `+` joins when either side is a string.
   `run(source)` returns `{output: [lines], error: null | "line N: message"}`. */

const MAX_STEPS = 20000;
const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|("(?:[^"\\]|\\.)*")|([A-Za-z_]\w*)|(==|!=|<=|>=|[-+*/%<>(),=]))/y;

class MiniError extends Error {}

function tokenize(text, line) {
  const tokens = [];
  TOKEN.lastIndex = 0;
  let position = 0;
  while (position < text.length) {
    if (/^\s*$/.test(text.slice(position))) break;
    TOKEN.lastIndex = position;
    const m = TOKEN.exec(text);
    if (!m) throw new MiniError(`line ${line}: unexpected character '${text.slice(position).trim()[0]}'`);
    position = TOKEN.lastIndex;
    if (m[1] !== undefined) tokens.push({kind: 'num', value: Number(m[1])});
    else if (m[2] !== undefined) tokens.push({kind: 'str', value: JSON.parse(m[2])});
    else if (m[3] !== undefined) tokens.push({kind: 'name', value: m[3]});
    else tokens.push({kind: 'op', value: m[4]});
  }
  return tokens;
}

function show(value) {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(Math.round(value * 1e6) / 1e6);
  return String(value);
}

const FUNCTIONS = {
  len: (s) => show(s).length,
  upper: (s) => show(s).toUpperCase(),
  lower: (s) => show(s).toLowerCase(),
  str: (x) => show(x),
  num: (s) => Number(s),
  round: (x) => Math.round(x),
  abs: (x) => Math.abs(x),
  min: (...xs) => Math.min(...xs),
  max: (...xs) => Math.max(...xs),
};

/** A precedence-climbing parser-evaluator over one line's tokens. */
class Expression {
  constructor(tokens, line, vars) {
    this.tokens = tokens;
    this.i = 0;
    this.line = line;
    this.vars = vars;
  }

  fail(message) {
    throw new MiniError(`line ${this.line}: ${message}`);
  }

  peek(value) {
    const t = this.tokens[this.i];
    return t && (t.kind === 'op' || t.kind === 'name') && t.value === value;
  }

  take(value) {
    if (!this.peek(value)) return false;
    this.i += 1;
    return true;
  }

  evaluate() {
    const value = this.or();
    if (this.i < this.tokens.length) this.fail(`unexpected '${this.tokens[this.i].value}'`);
    return value;
  }

  or() {
    let left = this.and();
    while (this.take('or')) {
      const right = this.and();
      left = left || right;
    }
    return left;
  }

  and() {
    let left = this.not();
    while (this.take('and')) {
      const right = this.not();
      left = left && right;
    }
    return left;
  }

  not() {
    return this.take('not') ? !this.not() : this.comparison();
  }

  comparison() {
    const left = this.sum();
    for (const op of ['==', '!=', '<=', '>=', '<', '>']) {
      if (this.take(op)) {
        const right = this.sum();
        return {'==': left === right, '!=': left !== right, '<=': left <= right, '>=': left >= right,
          '<': left < right, '>': left > right}[op];
      }
    }
    return left;
  }

  sum() {
    let left = this.product();
    for (;;) {
      if (this.take('+')) {
        const right = this.product();
        left = typeof left === 'string' || typeof right === 'string' ? show(left) + show(right) : this.number(left) + this.number(right);
      } else if (this.take('-')) left = this.number(left) - this.number(this.product());
      else return left;
    }
  }

  product() {
    let left = this.unary();
    for (;;) {
      if (this.take('*')) left = this.number(left) * this.number(this.unary());
      else if (this.take('/')) {
        const right = this.number(this.unary());
        if (right === 0) this.fail('division by zero');
        left = this.number(left) / right;
      } else if (this.take('%')) left = this.number(left) % this.number(this.unary());
      else return left;
    }
  }

  unary() {
    return this.take('-') ? -this.number(this.unary()) : this.primary();
  }

  number(value) {
    if (typeof value !== 'number') this.fail(`expected a number, got ${JSON.stringify(value)}`);
    return value;
  }

  primary() {
    const t = this.tokens[this.i];
    if (!t) this.fail('expression ends too early');
    this.i += 1;
    if (t.kind === 'num' || t.kind === 'str') return t.value;
    if (t.kind === 'op' && t.value === '(') {
      const value = this.or();
      if (!this.take(')')) this.fail("missing ')'");
      return value;
    }
    if (t.kind === 'name') {
      if (t.value === 'true' || t.value === 'false') return t.value === 'true';
      if (this.take('(')) return this.call(t.value);
      if (!(t.value in this.vars)) this.fail(`unknown name '${t.value}'`);
      return this.vars[t.value];
    }
    return this.fail(`unexpected '${t.value}'`);
  }

  call(name) {
    if (!(name in FUNCTIONS)) this.fail(`unknown function '${name}'`);
    const args = [];
    if (!this.take(')')) {
      do args.push(this.or()); while (this.take(','));
      if (!this.take(')')) this.fail("missing ')'");
    }
    return FUNCTIONS[name](...args);
  }
}

/** Split source lines into a tree of statements with their bodies. */
function parseBlock(lines, start, closers) {
  const body = [];
  let i = start;
  while (i < lines.length) {
    const {text, line} = lines[i];
    const word = text.split(/\s+/)[0];
    if (closers.includes(word)) return {body, next: i, closer: word};
    if (word === 'if' || word === 'while' || word === 'repeat') {
      const condition = text.slice(word.length).trim();
      if (!condition) throw new MiniError(`line ${line}: '${word}' needs an expression`);
      const inner = parseBlock(lines, i + 1, word === 'if' ? ['else', 'end'] : ['end']);
      let otherwise = [];
      let next = inner.next;
      if (inner.closer === 'else') {
        const rest = parseBlock(lines, next + 1, ['end']);
        otherwise = rest.body;
        next = rest.next;
        if (rest.closer !== 'end') throw new MiniError(`line ${line}: '${word}' has no matching 'end'`);
      } else if (inner.closer !== 'end') throw new MiniError(`line ${line}: '${word}' has no matching 'end'`);
      body.push({kind: word, line, condition, body: inner.body, otherwise});
      i = next + 1;
    } else {
      body.push({kind: 'simple', line, text});
      i += 1;
    }
  }
  return {body, next: i, closer: null};
}

/** The line without its `#` comment (a `#` inside a string is text). */
function stripComment(raw) {
  let inString = false;
  for (let k = 0; k < raw.length; k += 1) {
    if (raw[k] === '\\' && inString) k += 1;
    else if (raw[k] === '"') inString = !inString;
    else if (raw[k] === '#' && !inString) return raw.slice(0, k);
  }
  return raw;
}

/** Run a Mini program. */
export function run(source) {
  const output = [];
  const vars = {};
  let steps = 0;
  const evaluate = (text, line) => new Expression(tokenize(text, line), line, vars).evaluate();

  function execute(statements) {
    for (const s of statements) {
      steps += 1;
      if (steps > MAX_STEPS) throw new MiniError(`line ${s.line}: too many steps (endless loop?)`);
      if (s.kind === 'if') execute(evaluate(s.condition, s.line) ? s.body : s.otherwise);
      else if (s.kind === 'while') {
        while (evaluate(s.condition, s.line)) {
          execute(s.body);
          steps += 1;
          if (steps > MAX_STEPS) throw new MiniError(`line ${s.line}: too many steps (endless loop?)`);
        }
      } else if (s.kind === 'repeat') {
        const count = evaluate(s.condition, s.line);
        for (let k = 0; k < count; k += 1) execute(s.body);
      } else simple(s.text, s.line);
    }
  }

  function simple(text, line) {
    let m;
    if ((m = /^print(?:\s+(.*))?$/.exec(text))) {
      const tokens = tokenize(m[1] || '', line);
      const expr = new Expression(tokens, line, vars);
      const parts = [];
      while (expr.i < tokens.length) {
        parts.push(show(expr.or()));
        if (expr.i < tokens.length && !expr.take(',')) expr.fail(`unexpected '${tokens[expr.i].value}'`);
      }
      output.push(parts.join(' '));
    } else if ((m = /^(?:let\s+)?([A-Za-z_]\w*)\s*=(?!=)\s*(.*)$/.exec(text))) {
      if (['if', 'while', 'repeat', 'print', 'end', 'else'].includes(m[1])) throw new MiniError(`line ${line}: '${m[1]}' is a keyword`);
      if (!m[2]) throw new MiniError(`line ${line}: '=' needs a value`);
      vars[m[1]] = evaluate(m[2], line);
    } else if (text === 'end' || text === 'else') throw new MiniError(`line ${line}: '${text}' without a block`);
    else throw new MiniError(`line ${line}: cannot understand '${text}'`);
  }

  try {
    const lines = source.split('\n')
      .map((raw, k) => ({text: stripComment(raw).trim(), line: k + 1}))
      .filter((l) => l.text);
    const program = parseBlock(lines, 0, []);
    execute(program.body);
    return {output, error: null};
  } catch (error) {
    if (error instanceof MiniError) return {output, error: error.message};
    return {output, error: `internal error: ${error.message}`};
  }
}
