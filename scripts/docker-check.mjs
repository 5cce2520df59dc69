#!/usr/bin/env node
// docker-check: rehearse the Dockerfile's build and start steps without Docker.
//
// The steps are read from the Dockerfile itself, so the two cannot drift apart:
//   * every stage gets a clean temporary directory that stands in for its root filesystem
//     (container path /app is <tmp>/app);
//   * COPY from the build context copies from this repository, honouring .dockerignore;
//     COPY --from=<stage> copies out of that stage's temporary directory;
//   * RUN lines run for real with `sh -c` in the stage's WORKDIR, except the OS package-manager
//     ones (apt-get ...), which are skipped: this machine already has the toolchain;
//   * the final stage's CMD is started with the stage's ENV, on a free port instead of the
//     EXPOSEd one and with the VOLUME mapped into a temporary directory; then /ok, the HEALTHCHECK
//     command, a SIGTERM shutdown and the database file on the volume are checked.
// What it cannot see: the base image's contents, users and file ownership, apt packages, the
// real network of `docker build`. Those need a real Docker build.
//
// Env: DOCKERFILE=path (default: ./Dockerfile of the repository), KEEP=1 keeps the temp dirs.
// Prints one `docker-check: ...` line per step; ends with `docker-check: ok` (exit 0) or with the
// failing step and the child's output tail (exit 1).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const posix = path.posix
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dockerfilePath = process.env.DOCKERFILE ? path.resolve(process.env.DOCKERFILE) : path.join(repoRoot, 'Dockerfile')
const contextDir = repoRoot
const keep = process.env.KEEP === '1'

const READY_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 10_000
const REQUEST_TIMEOUT_MS = 5_000
const TAIL_LINES = 40
const TAIL_BYTES = 256 * 1024

const OS_PACKAGE_MANAGERS = new Set(['apt-get', 'apt', 'aptitude', 'dpkg', 'apk', 'yum', 'dnf', 'microdnf', 'zypper'])
// Absolute paths a RUN line may name without them being mapped into the stage directory.
const SYSTEM_PATHS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/bin/sh', '/usr/bin/env'])
const INSTRUCTIONS = new Set(['FROM', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'USER', 'EXPOSE', 'VOLUME', 'HEALTHCHECK', 'CMD'])

/** @param {string} message */
const log = (message) => console.log(`docker-check: ${message}`)

/**
 * One logical instruction of the Dockerfile: its first line, its keyword (upper case), the rest.
 * @typedef {{ line: number, keyword: string, args: string, text: string }} Instruction
 */
/**
 * A stage's operations, by keyword (FROM makes the stage itself): what the build and the start need of each.
 * @typedef {{ line: number, text: string }} OpBase
 * @typedef {OpBase & { keyword: 'WORKDIR', path: string }} WorkdirOp
 * @typedef {OpBase & { keyword: 'ENV', pairs: [string, string][] }} EnvOp
 * @typedef {OpBase & { keyword: 'COPY', from: string | null, chown: string | null, sources: string[], dest: string, workdir: string }} CopyOp
 * @typedef {OpBase & { keyword: 'RUN', env: Map<string, string>, workdir: string } & ({ exec: string[], shell: null } | { exec: null, shell: string })} RunOp
 * @typedef {OpBase & { keyword: 'USER', user: string }} UserOp
 * @typedef {OpBase & { keyword: 'VOLUME', paths: string[] }} VolumeOp
 * @typedef {OpBase & { keyword: 'EXPOSE' | 'HEALTHCHECK' | 'CMD' }} DeclarationOp what the stage records (see Stage) and the start uses
 * @typedef {WorkdirOp | EnvOp | CopyOp | RunOp | UserOp | VolumeOp | DeclarationOp} Op
 */
/**
 * CMD: exec form (`exec`) or shell form (`shell`).
 * @typedef {{ line: number, exec: string[], shell: null } | { line: number, exec: null, shell: string }} Command
 */
/**
 * HEALTHCHECK: its command (`exec` when in exec form; `shell` is the text as written), its options
 * (durations in ms) and the time limit of one check.
 * @typedef {{ line: number, exec: string[] | null, shell: string, options: Record<string, number>, timeoutMs: number }} Healthcheck
 */
/**
 * One build stage, as parsed.
 * @typedef {object} Stage
 * @property {number} index
 * @property {number} line
 * @property {string} image
 * @property {string | null} name lower case
 * @property {string} label how the log names it
 * @property {Op[]} ops
 * @property {Map<string, string>} env its ENV so far
 * @property {string} workdir
 * @property {string | null} user
 * @property {string[]} expose
 * @property {string[]} volumes
 * @property {Healthcheck | null | undefined} healthcheck undefined when none is declared, null for HEALTHCHECK NONE
 * @property {Command | null} cmd
 */
/**
 * A `chown owner targets...` a RUN line holds (container paths).
 * @typedef {{ owner: string, targets: string[] }} Chown
 */
/**
 * How a child ended: exit code or signal, or the error that kept it from starting.
 * @typedef {{ code: number | null, signal: NodeJS.Signals | null, error: Error | null }} Exit
 */
/** @typedef {(env: Map<string, string>) => Record<string, string>} MapEnv a stage's ENV with container paths mapped into its directory */

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error))

/** A failed step: its name, what went wrong and, when a child process was involved, its output. */
class CheckError extends Error {
  /**
   * @param {string} step
   * @param {string} message
   * @param {string} [output]
   */
  constructor(step, message, output) {
    super(message)
    this.step = step
    this.output = output
  }
}

/**
 * A failure to understand the Dockerfile, pointing at its line.
 * @param {number} line
 * @param {string} message
 */
const parseError = (line, message) => new CheckError('parse Dockerfile', `${path.basename(dockerfilePath)}:${line}: ${message}`)

// ---------------------------------------------------------------------------------------------
// Dockerfile parsing (the subset hangar's Dockerfile uses)
// ---------------------------------------------------------------------------------------------

/**
 * Split the file into logical instructions: comments dropped, `\` continuations joined.
 * @param {string} text
 * @returns {Instruction[]}
 */
function readInstructions(text) {
  const lines = text.split(/\r?\n/)
  /** @type {{ line: number, text: string }[]} */
  const instructions = []
  /** @type {{ line: number, text: string } | null} */
  let current = null
  let directivesAllowed = true
  for (const [index, raw] of lines.entries()) {
    const trimmed = raw.trim()
    if (directivesAllowed && current === null) {
      const directive = /^#\s*([a-zA-Z]+)\s*=\s*(.*)$/.exec(trimmed)
      if (directive) {
        const [, name, value] = directive
        if (name.toLowerCase() === 'escape' && value.trim() !== '\\') {
          throw parseError(index + 1, `escape=${value.trim()} is not supported (only \\)`)
        }
        continue
      }
      directivesAllowed = false
    }
    // Comment lines are dropped, also in the middle of a continued instruction (as Docker does);
    // so are blank lines inside one.
    if (trimmed.startsWith('#') || trimmed === '') continue
    let body = raw.replace(/\s+$/, '')
    const continues = body.endsWith('\\')
    if (continues) body = body.slice(0, -1)
    if (current === null) current = { line: index + 1, text: body.trimStart() }
    else current.text += body
    if (!continues) {
      instructions.push(current)
      current = null
    }
  }
  if (current !== null) instructions.push(current)
  return instructions.map(({ line, text }) => {
    const match = /^(\S+)\s*([\s\S]*)$/.exec(text)
    // Only a last line that is a lone `\` leaves an instruction without a word.
    if (!match) throw parseError(line, 'the file ends inside an instruction continued with \\')
    return { line, keyword: match[1].toUpperCase(), args: match[2].trim(), text }
  })
}

/**
 * Take leading `--name=value` flags; any flag not in `allowed` is an error.
 * @param {Instruction} ins
 * @param {string[]} allowed
 */
function takeFlags(ins, allowed) {
  /** @type {Record<string, string>} */
  const flags = {}
  let rest = ins.args
  for (;;) {
    const match = /^--([a-z-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest)
    if (!match) break
    if (!allowed.includes(match[1])) throw parseError(ins.line, `${ins.keyword} --${match[1]} is not understood by docker-check`)
    flags[match[1]] = match[2] ?? ''
    rest = rest.slice(match[0].length)
  }
  return { flags, rest: rest.trim() }
}

/**
 * Exec form (a JSON array of strings) or null for shell form; JSON-looking but invalid is an error.
 * @param {Instruction} ins
 * @param {string} text
 * @returns {string[] | null}
 */
function execForm(ins, text) {
  if (!text.startsWith('[')) return null
  let value
  try {
    value = JSON.parse(text)
  } catch {
    throw parseError(ins.line, `${ins.keyword} looks like exec form but is not valid JSON (Docker would run it through sh): ${text}`)
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string')) {
    throw parseError(ins.line, `${ins.keyword} exec form must be a non-empty JSON array of strings`)
  }
  return value
}

/**
 * Docker's word processing for ENV, WORKDIR, COPY, VOLUME, USER and EXPOSE: quotes removed,
 * backslash escapes, $VAR / ${VAR} / ${VAR:-word} / ${VAR:+word} expanded from the stage's ENV.
 * With `split`, unquoted whitespace separates words; without, the whole text is one word.
 * @param {Instruction} ins
 * @param {string} text
 * @param {Map<string, string>} env
 * @param {boolean} [split]
 */
function shellWords(ins, text, env, split = true) {
  /** @type {string[]} */
  const words = []
  let word = ''
  let inWord = false
  let i = 0
  const expand = () => {
    // text[i] === '$'
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}/.exec(text.slice(i))
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i))
    const variable = braced ?? plain
    if (!variable) {
      if (text[i + 1] === '{') throw parseError(ins.line, `unsupported variable form in ${ins.keyword}: ${text.slice(i)}`)
      i += 1
      return '$'
    }
    const [whole, name, modifier, operand] = variable
    i += whole.length
    const value = env.get(name)
    if (modifier === ':-') return value ? value : operand
    if (modifier === ':+') return value ? operand : ''
    if (value === undefined) {
      throw parseError(ins.line, `${ins.keyword} uses $${name}, which no ENV of this stage sets (a base-image variable? docker-check cannot know it)`)
    }
    return value
  }
  while (i < text.length) {
    const c = text[i]
    if (split && /\s/.test(c)) {
      if (inWord) words.push(word)
      word = ''
      inWord = false
      i += 1
      continue
    }
    inWord = true
    if (c === "'") {
      const end = text.indexOf("'", i + 1)
      if (end < 0) throw parseError(ins.line, `unterminated ' in ${ins.keyword}`)
      word += text.slice(i + 1, end)
      i = end + 1
    } else if (c === '"') {
      i += 1
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length && '"\\$'.includes(text[i + 1])) {
          word += text[i + 1]
          i += 2
        } else if (text[i] === '$') word += expand()
        else word += text[i++]
      }
      if (i >= text.length) throw parseError(ins.line, `unterminated " in ${ins.keyword}`)
      i += 1
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[i + 1]
      i += 2
    } else if (c === '$') word += expand()
    else {
      word += c
      i += 1
    }
  }
  if (inWord) words.push(word)
  return words
}

/**
 * Go duration (as HEALTHCHECK options take them) in milliseconds.
 * @param {Instruction} ins
 * @param {string} value
 */
function parseDuration(ins, value) {
  /** @type {Record<string, number>} */
  const units = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw parseError(ins.line, `HEALTHCHECK: ${JSON.stringify(value)} is not a duration like 30s or 1m30s`)
  }
  return parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * units[unit], 0)
}

/**
 * Break a shell command into top-level segments on && || ; | (quotes respected).
 * @param {string} command
 */
function shellSegments(command) {
  /** @type {{ text: string, after: string | null }[]} */
  const segments = []
  let start = 0
  /** @type {string | null} */
  let quote = null
  for (let i = 0; i < command.length; i++) {
    const c = command[i]
    if (quote) {
      if (c === '\\' && quote === '"') i += 1
      else if (c === quote) quote = null
      continue
    }
    if (c === '\\') {
      i += 1
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      continue
    }
    const two = command.slice(i, i + 2)
    const op = two === '&&' || two === '||' ? two : c === ';' || c === '|' ? c : null
    if (op) {
      segments.push({ text: command.slice(start, i).trim(), after: op })
      i += op.length - 1
      start = i + 1
    }
  }
  segments.push({ text: command.slice(start).trim(), after: null })
  return segments
}

/**
 * First command word of a shell segment, skipping `VAR=value` prefixes.
 * @param {string} segment
 */
function commandWord(segment) {
  const words = segment.split(/\s+/).filter(Boolean)
  return words.find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) ?? ''
}

/**
 * Parse the Dockerfile into stages of structured operations, expanding variables as Docker does.
 * @param {string} text
 */
function parseDockerfile(text) {
  /** @type {Stage[]} */
  const stages = []
  for (const ins of readInstructions(text)) {
    if (!INSTRUCTIONS.has(ins.keyword)) {
      throw parseError(ins.line, `instruction ${ins.keyword} is not understood by docker-check (it knows ${[...INSTRUCTIONS].join(', ')})`)
    }
    if (ins.keyword === 'FROM') {
      const { rest } = takeFlags(ins, [])
      const match = /^(\S+)(?:\s+[Aa][Ss]\s+([A-Za-z0-9][A-Za-z0-9_.-]*))?$/.exec(rest)
      if (!match) throw parseError(ins.line, `FROM must be "FROM image [AS name]", got: ${rest}`)
      if (stages.some((s) => s.name && s.name === match[1].toLowerCase())) {
        throw parseError(ins.line, `FROM ${match[1]}: building on another stage is not supported by docker-check`)
      }
      stages.push({
        index: stages.length,
        line: ins.line,
        image: match[1],
        name: match[2]?.toLowerCase() ?? null,
        label: match[2]?.toLowerCase() ?? `stage ${stages.length}`,
        ops: [],
        env: new Map(),
        workdir: '/',
        user: null,
        expose: [],
        volumes: [],
        healthcheck: undefined,
        cmd: null,
      })
      continue
    }
    const stage = stages.at(-1)
    if (!stage) throw parseError(ins.line, `${ins.keyword} before the first FROM`)
    const env = stage.env
    const base = { line: ins.line, text: ins.text }
    switch (ins.keyword) {
      case 'WORKDIR': {
        const words = shellWords(ins, ins.args, env, false)
        if (words.length !== 1 || words[0] === '') throw parseError(ins.line, 'WORKDIR needs one path')
        stage.workdir = posix.resolve(stage.workdir, words[0])
        stage.ops.push({ ...base, keyword: 'WORKDIR', path: stage.workdir })
        break
      }
      case 'ENV': {
        /** @type {[string, string][]} */
        const pairs = []
        if (/^[A-Za-z_][A-Za-z0-9_.-]*=/.test(ins.args)) {
          for (const word of shellWords(ins, ins.args, env, true)) {
            const eq = word.indexOf('=')
            if (eq <= 0) throw parseError(ins.line, `ENV: expected KEY=VALUE, got ${JSON.stringify(word)}`)
            pairs.push([word.slice(0, eq), word.slice(eq + 1)])
          }
        } else {
          // Legacy form `ENV KEY value with spaces`: the rest of the line is the value.
          const match = /^(\S+)\s+([\s\S]+)$/.exec(ins.args)
          if (!match) throw parseError(ins.line, 'ENV needs KEY=VALUE pairs or KEY VALUE')
          pairs.push([match[1], shellWords(ins, match[2], env, false)[0] ?? ''])
        }
        // Every pair sees the environment from before this instruction, as in Docker.
        for (const [key, value] of pairs) env.set(key, value)
        stage.ops.push({ ...base, keyword: 'ENV', pairs })
        break
      }
      case 'COPY': {
        const { flags, rest } = takeFlags(ins, ['from', 'chown'])
        const exec = execForm(ins, rest)
        const words = exec ?? shellWords(ins, rest, env, true)
        if (words.length < 2) throw parseError(ins.line, 'COPY needs at least one source and a destination')
        const sources = words.slice(0, -1)
        const dest = words[words.length - 1]
        if (sources.length > 1 && !dest.endsWith('/')) {
          throw parseError(ins.line, `COPY with several sources needs a destination ending in / (Docker refuses ${dest})`)
        }
        for (const source of sources) {
          if (/[*?[]/.test(source)) throw parseError(ins.line, `COPY source ${source}: wildcards are not supported by docker-check`)
        }
        const from = flags.from === undefined ? null : flags.from.toLowerCase()
        stage.ops.push({ ...base, keyword: 'COPY', from, chown: flags.chown ?? null, sources, dest, workdir: stage.workdir })
        break
      }
      case 'RUN': {
        const { rest } = takeFlags(ins, [])
        const exec = execForm(ins, rest)
        if (!exec && !rest) throw parseError(ins.line, 'RUN needs a command')
        const run = { ...base, keyword: /** @type {const} */ ('RUN'), env: new Map(env), workdir: stage.workdir }
        stage.ops.push(exec ? { ...run, exec, shell: null } : { ...run, exec: null, shell: rest })
        break
      }
      case 'USER': {
        const words = shellWords(ins, ins.args, env, true)
        if (words.length !== 1) throw parseError(ins.line, 'USER needs one user[:group]')
        stage.user = words[0]
        stage.ops.push({ ...base, keyword: 'USER', user: words[0] })
        break
      }
      case 'EXPOSE': {
        const words = shellWords(ins, ins.args, env, true)
        if (words.length === 0) throw parseError(ins.line, 'EXPOSE needs a port')
        for (const word of words) {
          const match = /^(\d+)(?:\/(tcp|udp))?$/.exec(word)
          if (!match) throw parseError(ins.line, `EXPOSE: ${word} is not a port like 8123 or 8123/tcp`)
          stage.expose.push(match[1])
        }
        stage.ops.push({ ...base, keyword: 'EXPOSE' })
        break
      }
      case 'VOLUME': {
        const paths = execForm(ins, ins.args) ?? shellWords(ins, ins.args, env, true)
        if (paths.length === 0) throw parseError(ins.line, 'VOLUME needs a path')
        for (const p of paths) {
          if (!p.startsWith('/') || posix.normalize(p) === '/') throw parseError(ins.line, `VOLUME ${p}: docker-check maps absolute paths below / only`)
          stage.volumes.push(posix.normalize(p).replace(/\/$/, ''))
        }
        stage.ops.push({ ...base, keyword: 'VOLUME', paths })
        break
      }
      case 'HEALTHCHECK': {
        stage.ops.push({ ...base, keyword: 'HEALTHCHECK' })
        if (/^NONE$/i.test(ins.args)) {
          stage.healthcheck = null
          break
        }
        const { flags, rest } = takeFlags(ins, ['interval', 'timeout', 'start-period', 'start-interval', 'retries'])
        const match = /^CMD\s+([\s\S]+)$/i.exec(rest)
        if (!match) throw parseError(ins.line, 'HEALTHCHECK must be "HEALTHCHECK [options] CMD command" or NONE')
        /** @type {Record<string, number>} */
        const options = {}
        for (const [name, value] of Object.entries(flags)) {
          if (name === 'retries') {
            if (!/^\d+$/.test(value)) throw parseError(ins.line, `HEALTHCHECK --retries=${value} is not a whole number`)
            options.retries = Number(value)
          } else options[name] = parseDuration(ins, value)
        }
        const command = match[1].trim()
        stage.healthcheck = { line: ins.line, options, exec: execForm(ins, command), shell: command, timeoutMs: options.timeout ?? 30_000 }
        break
      }
      case 'CMD': {
        const exec = execForm(ins, ins.args)
        if (!exec && !ins.args) throw parseError(ins.line, 'CMD needs a command')
        stage.cmd = exec ? { line: ins.line, exec, shell: null } : { line: ins.line, exec: null, shell: ins.args }
        stage.ops.push({ ...base, keyword: 'CMD' })
        break
      }
    }
  }
  if (stages.length === 0) throw new CheckError('parse Dockerfile', 'no FROM: not a Dockerfile?')
  return stages
}

// ---------------------------------------------------------------------------------------------
// .dockerignore
// ---------------------------------------------------------------------------------------------

/**
 * Regular expression for one .dockerignore pattern (Go filepath.Match plus **), anchored at the root.
 * @param {string} pattern
 */
function patternToRegExp(pattern) {
  let source = '^'
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]
    if (pattern.startsWith('**', i)) {
      if (pattern[i + 2] === '/') {
        source += '(?:.*/)?'
        i += 3
      } else {
        source += '.*'
        i += 2
      }
    } else if (c === '*') {
      source += '[^/]*'
      i += 1
    } else if (c === '?') {
      source += '[^/]'
      i += 1
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 1)
      if (end < 0) throw new CheckError('read .dockerignore', `unterminated [ in pattern ${pattern}`)
      let body = pattern.slice(i + 1, end)
      if (body.startsWith('^') || body.startsWith('!')) body = `^${body.slice(1)}`
      source += `[${body.replace(/\\/g, '\\\\')}]`
      i = end + 1
    } else if (c === '\\' && i + 1 < pattern.length) {
      source += pattern[i + 1].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
      i += 2
    } else {
      source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
      i += 1
    }
  }
  return new RegExp(`${source}$`)
}

/**
 * Rules of a .dockerignore file, and a predicate for a context-relative path (POSIX separators).
 * @param {string} file
 */
function loadIgnore(file) {
  /** @type {{ exception: boolean, regexp: RegExp, pattern: string }[]} */
  const rules = []
  if (fs.existsSync(file)) {
    for (const raw of fs.readFileSync(file, 'utf8').split(/\r?\n/)) {
      let line = raw.trim()
      if (line === '' || line.startsWith('#')) continue
      const exception = line.startsWith('!')
      if (exception) line = line.slice(1).trim()
      line = posix.normalize(line).replace(/^\/+/, '').replace(/\/+$/, '')
      if (line === '' || line === '.') continue
      rules.push({ exception, regexp: patternToRegExp(line), pattern: line })
    }
  }
  const hasExceptions = rules.some((rule) => rule.exception)
  /**
   * Ignored when the last rule that matches the path or one of its parent directories is not an exception.
   * @param {string} relative
   */
  const ignored = (relative) => {
    const parts = relative.split('/')
    const candidates = parts.map((_, n) => parts.slice(0, n + 1).join('/'))
    let result = false
    for (const rule of rules) {
      if (candidates.some((candidate) => rule.regexp.test(candidate))) result = !rule.exception
    }
    return result
  }
  return { file, rules, ignored, hasExceptions }
}
/** @typedef {ReturnType<typeof loadIgnore>} Ignore */

// ---------------------------------------------------------------------------------------------
// processes
// ---------------------------------------------------------------------------------------------

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set()

/** Keep the last TAIL_BYTES of a stream's output. */
function collector() {
  let text = ''
  return {
    /** @param {string} chunk */
    add(chunk) {
      text += chunk
      if (text.length > TAIL_BYTES) text = text.slice(-TAIL_BYTES)
    },
    get text() {
      return text
    },
  }
}

/**
 * The last lines of a child's output, for a failure report.
 * @param {string} label
 * @param {string} text
 */
function tail(label, text) {
  const lines = text.replace(/\s+$/, '').split('\n')
  if (lines.length === 1 && lines[0] === '') return `  (${label}: empty)`
  const shown = lines.slice(-TAIL_LINES)
  const omitted = lines.length - shown.length
  return [`  --- ${label} (last ${shown.length} lines${omitted ? `, ${omitted} earlier omitted` : ''}) ---`, ...shown.map((l) => `  ${l}`)].join('\n')
}

/**
 * Spawn a child in its own process group (so a failure can end everything it started).
 * @param {string[]} argv
 * @param {{ cwd: string, env: NodeJS.ProcessEnv }} options
 */
function start(argv, { cwd, env }) {
  const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const stdout = collector()
  const stderr = collector()
  child.stdout.setEncoding('utf8').on('data', (chunk) => stdout.add(chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => stderr.add(chunk))
  /** @type {Promise<Exit>} */
  const exited = new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: null, signal: null, error }))
    child.on('close', (code, signal) => resolve({ code, signal, error: null }))
  })
  children.add(child)
  exited.then(() => children.delete(child))
  return { child, stdout, stderr, exited }
}

/**
 * Run a child to completion, with an optional time limit after which its group is killed.
 * @param {string[]} argv
 * @param {{ cwd: string, env: NodeJS.ProcessEnv }} options
 * @param {number} [timeoutMs]
 */
async function runToEnd(argv, options, timeoutMs) {
  const started = Date.now()
  const proc = start(argv, options)
  let timer
  let timedOut = false
  if (timeoutMs) {
    timer = setTimeout(() => {
      timedOut = true
      killGroup(proc.child, 'SIGKILL')
    }, timeoutMs)
  }
  const result = await proc.exited
  clearTimeout(timer)
  return { ...result, timedOut, ms: Date.now() - started, stdout: proc.stdout.text, stderr: proc.stderr.text }
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @param {NodeJS.Signals} signal
 */
function killGroup(child, signal) {
  if (child.pid === undefined) return // it never started
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

/**
 * @param {{ stderr: string, stdout: string }} result
 * @param {string} [who]
 */
const childOutput = (result, who = '') => `${tail(`${who}stderr`, result.stderr)}\n${tail(`${who}stdout`, result.stdout)}`

/** @param {Exit & { timedOut?: boolean }} result */
const describeExit = (result) =>
  result.error ? `could not start: ${result.error.message}` : result.timedOut ? 'timed out and was killed' : result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`

/** @param {number} ms */
const seconds = (ms) => (ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`)

/**
 * The host environment minus what an enclosing `npm run` adds: npm_* variables (npm_config_local_prefix
 * would point a nested npm at this repository!), INIT_CWD, and the node_modules/.bin PATH entries.
 */
function hostEnv() {
  /** @type {NodeJS.ProcessEnv} */
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || key === 'INIT_CWD' || key === 'NODE') continue
    env[key] = value
  }
  if (env.PATH) {
    env.PATH = env.PATH.split(path.delimiter)
      .filter((entry) => !entry.endsWith(`${path.sep}node_modules${path.sep}.bin`) && !entry.includes('node-gyp-bin'))
      .join(path.delimiter)
  }
  return env
}

/**
 * A TCP port that was free a moment ago: listen on port 0, read it, close.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, () => {
      // Listening on a TCP port, its address is an AddressInfo (a string only for a pipe or socket).
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
      server.close(() => resolve(port))
    })
  })
}

/**
 * @param {string} url
 * @returns {Promise<{ status: number, body: string }>}
 */
function httpGet(url) {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { timeout: REQUEST_TIMEOUT_MS }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
      response.on('error', reject)
    })
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)))
    request.on('error', reject)
  })
}

// ---------------------------------------------------------------------------------------------
// the rehearsal
// ---------------------------------------------------------------------------------------------

/** @type {string[]} */
const tempDirs = []

/** @param {string} label */
function makeTemp(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `docker-check-${label}-`))
  tempDirs.push(dir)
  return dir
}

/**
 * Host path of an absolute container path in a stage directory.
 * @param {string} root
 * @param {string} containerPath
 */
const onHost = (root, containerPath) => path.join(root, ...posix.normalize(containerPath).split('/').filter(Boolean))

/**
 * The prefix `p` is (or is below), if any.
 * @param {string} p
 * @param {string[]} prefixes
 */
const underPrefix = (p, prefixes) => prefixes.find((prefix) => p === prefix || p.startsWith(`${prefix}/`))

/**
 * Copy a context path (file or directory) to `dest`, leaving out what .dockerignore excludes.
 * @param {string} relative
 * @param {string} dest
 * @param {Ignore} ignore
 */
function copyFromContext(relative, dest, ignore) {
  let files = 0
  /** @param {string} rel @param {string} target */
  const walk = (rel, target) => {
    const source = path.join(contextDir, ...rel.split('/'))
    const stat = fs.lstatSync(source)
    if (stat.isDirectory()) {
      fs.mkdirSync(target, { recursive: true })
      for (const entry of fs.readdirSync(source).sort()) {
        const childRel = `${rel}/${entry}`
        if (ignore.ignored(childRel)) {
          // An excluded directory still has to be walked when an exception (!pattern) may re-include
          // something below it.
          if (!ignore.hasExceptions) continue
          const childStat = fs.lstatSync(path.join(source, entry))
          if (!childStat.isDirectory()) continue
        }
        walk(childRel, path.join(target, entry))
      }
    } else if (!ignore.ignored(rel)) {
      fs.mkdirSync(path.dirname(target), { recursive: true })
      if (stat.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(source), target)
      else fs.copyFileSync(source, target)
      files += 1
    }
  }
  walk(relative, dest)
  return files
}

/**
 * A COPY source in the build context: inside it, present, and not excluded by .dockerignore.
 * @param {string} step
 * @param {string} source
 * @param {Ignore} ignore
 */
function contextSource(step, source, ignore) {
  const relative = posix.normalize(source).replace(/^(\.\/)+/, '').replace(/^\/+/, '').replace(/\/+$/, '') || '.'
  if (relative === '..' || relative.startsWith('../')) throw new CheckError(step, `${source} is outside the build context`)
  if (relative !== '.' && ignore.ignored(relative)) {
    throw new CheckError(step, `${source} is excluded by ${path.basename(ignore.file)}; Docker would fail with "not found"`)
  }
  const hostSource = relative === '.' ? contextDir : path.join(contextDir, ...relative.split('/'))
  if (!fs.existsSync(hostSource)) throw new CheckError(step, `${source} does not exist in the build context ${contextDir}`)
  return { relative, hostSource }
}

/**
 * Where a COPY source lands: directories are copied by contents, files into a directory or onto a name.
 * @param {boolean} sourceIsDir
 * @param {string} sourceName
 * @param {string} destHost
 * @param {boolean} destIsDir
 */
function copyTarget(sourceIsDir, sourceName, destHost, destIsDir) {
  if (sourceIsDir) return destHost
  if (destIsDir || (fs.existsSync(destHost) && fs.statSync(destHost).isDirectory())) return path.join(destHost, sourceName)
  return destHost
}

/**
 * @param {Stage} stage
 * @param {CopyOp} op
 * @param {string} root the stage's directory
 * @param {Map<Stage, string>} stageRoots the directories of the stages built so far
 * @param {Map<string, Stage>} stagesByName
 * @param {Ignore} ignore
 */
function doCopy(stage, op, root, stageRoots, stagesByName, ignore) {
  const step = `[${stage.label}] line ${op.line}: ${op.text}`
  const containerDest = posix.resolve(op.workdir, op.dest)
  const destHost = onHost(root, containerDest)
  const destIsDir = op.dest.endsWith('/') || op.sources.length > 1
  let summary
  if (op.from !== null) {
    const from = stagesByName.get(op.from)
    if (!from) throw new CheckError(step, `--from=${op.from} is not an earlier stage of this Dockerfile (external images are not supported by docker-check)`)
    // main() builds every stage a COPY --from names before the stage that names it.
    const fromRoot = /** @type {string} */ (stageRoots.get(from))
    for (const source of op.sources) {
      const containerSource = posix.resolve('/', source)
      const hostSource = onHost(fromRoot, containerSource)
      if (!fs.existsSync(hostSource)) {
        throw new CheckError(step, `${containerSource} does not exist in stage ${from.label} (docker-check has only what that stage's COPY and RUN lines made, not the base image's files)`)
      }
      const isDir = fs.statSync(hostSource).isDirectory()
      const target = copyTarget(isDir, path.basename(hostSource), destHost, destIsDir)
      fs.mkdirSync(isDir ? target : path.dirname(target), { recursive: true })
      fs.cpSync(hostSource, target, { recursive: true, verbatimSymlinks: true, force: true })
    }
    summary = `from stage ${from.label}`
  } else {
    let files = 0
    for (const source of op.sources) {
      const { relative, hostSource } = contextSource(step, source, ignore)
      const isDir = fs.statSync(hostSource).isDirectory()
      const target = copyTarget(isDir, path.basename(hostSource), destHost, destIsDir)
      if (relative === '.') {
        fs.mkdirSync(target, { recursive: true })
        for (const entry of fs.readdirSync(contextDir).sort()) {
          if (ignore.ignored(entry) && !ignore.hasExceptions) continue
          files += copyFromContext(entry, path.join(target, entry), ignore)
        }
      } else files += copyFromContext(relative, target, ignore)
    }
    summary = `${files} file${files === 1 ? '' : 's'} from the context`
  }
  log(`[${stage.label}] COPY ${op.sources.join(' ')} -> ${containerDest}${op.dest.endsWith('/') ? '/' : ''} (${summary}${op.chown ? `; --chown=${op.chown} not emulated` : ''})`)
}

/**
 * Prepare a shell RUN line: OS package-manager lines are skipped (null), chown/chgrp segments are
 * dropped (ownership is checked statically instead), and absolute paths under the stage's WORKDIRs
 * and VOLUMEs are mapped into the stage directory. Anything else absolute is refused.
 * @param {Stage} stage
 * @param {RunOp & { shell: string }} op
 * @param {string} root
 * @param {string[]} prefixes
 * @returns {{ skip: true, packages: string[] } | { skip: false, command: string, chowns: Chown[] }}
 */
function prepareRun(stage, op, root, prefixes) {
  const step = `[${stage.label}] line ${op.line}: ${op.text}`
  const segments = shellSegments(op.shell)
  const words = segments.map((segment) => commandWord(segment.text))
  if (OS_PACKAGE_MANAGERS.has(words[0])) {
    const mixed = segments.filter((segment, n) => {
      if (OS_PACKAGE_MANAGERS.has(words[n])) return false
      // the usual clean-up of package lists and caches belongs to the package step
      return !(words[n] === 'rm' && /^rm\s+(-\S+\s+)*(\/var\/lib\/apt\/lists|\/var\/cache)\S*(\s+(\/var\/lib\/apt\/lists|\/var\/cache)\S*)*$/.test(segment.text))
    })
    if (mixed.length) {
      throw new CheckError(step, `this RUN mixes OS package commands with others (${mixed.map((s) => s.text).join('; ')}); put them on separate RUN lines so docker-check can skip one and run the other`)
    }
    const packages = segments
      .filter((_, n) => OS_PACKAGE_MANAGERS.has(words[n]))
      .flatMap((segment) => {
        const install = /\b(?:install|add)\s+(.*)$/.exec(segment.text)
        return install ? install[1].split(/\s+/).filter((w) => w && !w.startsWith('-')) : []
      })
    return { skip: true, packages }
  }
  /** @type {Chown[]} */
  const chowns = []
  const kept = []
  for (const [n, segment] of segments.entries()) {
    if (words[n] === 'chown' || words[n] === 'chgrp') {
      const args = segment.text.split(/\s+/).slice(1).filter((w) => !w.startsWith('-'))
      chowns.push({ owner: args[0], targets: args.slice(1).map((t) => posix.resolve(op.workdir, t)) })
      continue
    }
    kept.push(segment)
  }
  let command = op.shell
  if (chowns.length) {
    if (segments.some((segment) => segment.after && segment.after !== '&&')) {
      throw new CheckError(step, 'chown is supported only in a plain && chain')
    }
    command = kept.map((segment) => segment.text).join(' && ')
  }
  const mapped = command.replace(/(^|[\s='"])(\/[^\s'";&|<>()`$]*)/g, (whole, lead, p) => {
    if (SYSTEM_PATHS.has(p)) return whole
    const prefix = underPrefix(posix.normalize(p), prefixes)
    if (!prefix) {
      throw new CheckError(step, `RUN names ${p}, outside what docker-check maps into the stage directory (${prefixes.join(', ') || 'nothing'}); it will not touch this machine's ${p}`)
    }
    return `${lead}${root}${p}`
  })
  return { skip: false, command: command ? mapped : '', chowns }
}

/**
 * @param {Stage} stage
 * @param {RunOp} op
 * @param {string} root
 * @param {string[]} prefixes
 * @param {MapEnv} mapEnv
 */
async function doRun(stage, op, root, prefixes, mapEnv) {
  const step = `[${stage.label}] line ${op.line}: ${op.text}`
  let argv
  let shown
  if (op.exec) {
    argv = op.exec.map((arg) => {
      if (!arg.startsWith('/') || SYSTEM_PATHS.has(arg)) return arg
      if (!underPrefix(posix.normalize(arg), prefixes)) throw new CheckError(step, `RUN names ${arg}, outside what docker-check maps`)
      return `${root}${arg}`
    })
    shown = JSON.stringify(op.exec)
  } else {
    const prepared = prepareRun(stage, op, root, prefixes)
    if (prepared.skip) {
      const have = prepared.packages.map((name) => `${name}${commandExists(name) ? ' (on this machine)' : ' (not checked)'}`)
      log(`[${stage.label}] RUN skipped, OS packages (apt-get ...): this machine stands in for the base image${have.length ? `; wanted: ${have.join(', ')}` : ''}`)
      return
    }
    for (const { owner, targets } of prepared.chowns) {
      log(`[${stage.label}] RUN: chown ${owner} ${targets.join(' ')} not emulated (ownership was checked statically in the preflight)`)
    }
    if (!prepared.command) return
    argv = ['sh', '-c', prepared.command]
    shown = prepared.command === op.shell ? op.shell : `${op.shell}   [as: ${prepared.command}]`
  }
  const cwd = onHost(root, op.workdir)
  fs.mkdirSync(cwd, { recursive: true })
  const env = { ...hostEnv(), ...mapEnv(op.env) }
  const result = await runToEnd(argv, { cwd, env })
  if (result.error || result.code !== 0) {
    throw new CheckError(step, `RUN ${describeExit(result)} after ${seconds(result.ms)}`, childOutput(result))
  }
  log(`[${stage.label}] RUN ${shown} (${seconds(result.ms)})`)
}

/** @param {string} name */
function commandExists(name) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/**
 * Container paths a stage's RUN lines and ENV values may name: its WORKDIRs and VOLUMEs.
 * @param {Stage} stage
 */
const stagePrefixes = (stage) =>
  [...new Set([...stage.ops.filter((op) => op.keyword === 'WORKDIR').map((op) => op.path), ...stage.volumes])].filter((p) => p !== '/')

/**
 * Build one stage in its temporary directory; returns the ENV mapping the final stage starts with.
 * @param {Stage} stage
 * @param {string} root
 * @param {Map<Stage, string>} stageRoots
 * @param {Map<string, Stage>} stagesByName
 * @param {Ignore} ignore
 * @returns {Promise<{ mapEnv: MapEnv }>}
 */
async function buildStage(stage, root, stageRoots, stagesByName, ignore) {
  const prefixes = stagePrefixes(stage)
  /** @param {string} value */
  const mapValue = (value) => {
    const prefix = value.startsWith('/') ? underPrefix(posix.normalize(value), prefixes) : undefined
    return prefix ? `${root}${value}` : value
  }
  /** @type {MapEnv} */
  const mapEnv = (env) => Object.fromEntries([...env].map(([key, value]) => [key, mapValue(value)]))
  for (const op of stage.ops) {
    switch (op.keyword) {
      case 'WORKDIR':
        fs.mkdirSync(onHost(root, op.path), { recursive: true })
        log(`[${stage.label}] WORKDIR ${op.path} -> ${onHost(root, op.path)}`)
        break
      case 'COPY':
        doCopy(stage, op, root, stageRoots, stagesByName, ignore)
        break
      case 'RUN':
        await doRun(stage, op, root, prefixes, mapEnv)
        break
      case 'VOLUME':
        for (const p of op.paths) {
          fs.mkdirSync(onHost(root, p), { recursive: true })
          log(`[${stage.label}] VOLUME ${p} -> ${onHost(root, p)} (a temporary directory stands in for the volume)`)
        }
        break
      case 'ENV':
        for (const [key, value] of op.pairs) {
          const mapped = mapValue(value)
          log(`[${stage.label}] ENV ${key}=${value}${mapped === value ? '' : ` -> ${mapped}`}`)
        }
        break
      case 'USER':
        log(`[${stage.label}] USER ${op.user} (not emulated: processes run as ${os.userInfo().username})`)
        break
      default:
        break // EXPOSE, HEALTHCHECK, CMD: used when the final stage starts
    }
  }
  return { mapEnv }
}

/**
 * Without a real user `node`, at least check that each VOLUME is chowned to the USER that writes it.
 * @param {Stage} stage
 * @param {Chown[]} chowns
 */
function checkOwnership(stage, chowns) {
  const step = `[${stage.label}] ownership (static)`
  if (!stage.user) {
    log(`${step}: no USER, the process runs as root`)
    return
  }
  const user = stage.user.split(':')[0]
  if (user === 'root' || user === '0') {
    log(`${step}: USER ${stage.user} is root`)
    return
  }
  for (const volume of stage.volumes) {
    const owned = chowns.some(({ owner, targets }) => owner && owner.split(':')[0] === user && targets.includes(volume))
    if (!owned) {
      throw new CheckError(step, `VOLUME ${volume} is never chowned to USER ${user} in this stage; a fresh volume would be root-owned and ${user} could not write to it`)
    }
  }
  const copies = stage.ops.filter((op) => op.keyword === 'COPY')
  const foreign = copies.filter((op) => !op.chown || op.chown.split(':')[0] !== user)
  log(
    `${step}: VOLUME ${stage.volumes.join(', ') || '(none)'} chowned to ${user}; ${copies.length - foreign.length}/${copies.length} COPY lines --chown=${user}` +
      (foreign.length ? ` (root-owned: lines ${foreign.map((op) => op.line).join(', ')})` : ''),
  )
}

/**
 * What can be known before the slow build: every context COPY source is there and not ignored,
 * every RUN line is one docker-check can run or skip, each VOLUME is chowned to the USER, and the
 * final stage has a CMD, a HEALTHCHECK, an EXPOSEd port carried by an ENV value, and an ENV path
 * on a VOLUME.
 * @param {Stage[]} stages
 * @param {Set<Stage>} needed
 * @param {Stage} final
 * @param {Ignore} ignore
 */
function preflight(stages, needed, final, ignore) {
  /** @type {Chown[]} */
  let chowns = []
  for (const stage of stages) {
    if (!needed.has(stage)) continue
    const prefixes = stagePrefixes(stage)
    /** @type {Chown[]} */
    const found = []
    for (const op of stage.ops) {
      const step = `[${stage.label}] line ${op.line}: ${op.text}`
      if (op.keyword === 'COPY' && op.from === null) for (const source of op.sources) contextSource(step, source, ignore)
      if (op.keyword === 'RUN' && op.shell) {
        const prepared = prepareRun(stage, op, '/preflight', prefixes)
        if (!prepared.skip) found.push(...prepared.chowns)
      }
      if (op.keyword === 'RUN' && op.exec) {
        for (const arg of op.exec) {
          if (arg.startsWith('/') && !SYSTEM_PATHS.has(arg) && !underPrefix(posix.normalize(arg), prefixes)) {
            throw new CheckError(step, `RUN names ${arg}, outside what docker-check maps`)
          }
        }
      }
    }
    if (stage === final) chowns = found
  }
  const label = `[${final.label}]`
  if (!final.cmd) throw new CheckError(`${label} CMD`, 'the final stage has no CMD')
  if (final.healthcheck === undefined) throw new CheckError(`${label} HEALTHCHECK`, 'the final stage has no HEALTHCHECK')
  if (final.healthcheck === null) throw new CheckError(`${label} HEALTHCHECK`, 'the final stage says HEALTHCHECK NONE')
  if (final.expose.length === 0) throw new CheckError(`${label} EXPOSE`, 'the final stage EXPOSEs no port')
  if (![...final.env.values()].some((value) => final.expose.includes(value))) {
    throw new CheckError(`${label} EXPOSE`, `no ENV value equals the EXPOSEd port ${final.expose.join(', ')}, so docker-check cannot move the server to a free port`)
  }
  if (![...final.env.values()].some((value) => underPrefix(posix.normalize(value), final.volumes) && value.startsWith('/'))) {
    throw new CheckError(`${label} VOLUME`, `no ENV value points into a VOLUME (${final.volumes.join(', ') || 'none declared'}), so there is no database file to look for`)
  }
  checkOwnership(final, chowns)
  log('preflight ok: COPY sources, RUN lines, ownership, CMD, HEALTHCHECK, EXPOSE and VOLUME are usable; building')
}

/**
 * Start the final stage's CMD and put it through /ok, the HEALTHCHECK, SIGTERM and the volume check.
 * @param {Stage} stage
 * @param {string} root
 * @param {MapEnv} mapEnv
 */
async function startFinal(stage, root, mapEnv) {
  const label = `[${stage.label}]`

  // The environment of the container: the stage's ENV (paths mapped, the EXPOSEd port replaced by a
  // free one) over a minimal PATH and HOME; nothing else of this machine's environment.
  const env = mapEnv(stage.env)
  const port = await freePort()
  const portKeys = Object.keys(env).filter((key) => stage.expose.includes(env[key]))
  for (const key of portKeys) {
    log(`${label} port: ${key}=${env[key]} (EXPOSE) -> ${port} (a free port on this machine)`)
    env[key] = String(port)
  }
  const base = hostEnv()
  const containerEnv = { PATH: base.PATH, HOME: base.HOME ?? os.homedir(), ...env }
  const cwd = onHost(root, stage.workdir)
  // preflight() refused a final stage without a CMD or a HEALTHCHECK.
  const cmd = /** @type {Command} */ (stage.cmd)
  const check = /** @type {Healthcheck} */ (stage.healthcheck)
  const argv = cmd.exec ? cmd.exec : ['sh', '-c', cmd.shell]
  if (!cmd.exec) log(`${label} note: CMD is in shell form; sh, not the server, would receive SIGTERM in a container`)

  log(`${label} CMD ${JSON.stringify(argv)} in ${cwd}`)
  const started = Date.now()
  const server = start(argv, { cwd, env: containerEnv })
  const output = () => childOutput({ stderr: server.stderr.text, stdout: server.stdout.text }, 'server ')
  try {
    // Ready when the server logs its "hangar listening on" line; no fixed sleeps.
    /** @type {string} */
    const listening = await new Promise((resolve, reject) => {
      let buffer = ''
      const timer = setTimeout(() => reject(new CheckError(`${label} wait for "hangar listening on"`, `not ready within ${READY_TIMEOUT_MS / 1000} s`, output())), READY_TIMEOUT_MS)
      /** @param {string} chunk */
      const onData = (chunk) => {
        buffer += chunk
        const lines = buffer.split('\n')
        buffer = lines.pop() ?? '' // the unfinished last line (split gives at least one)
        for (const line of lines) {
          let message = line
          try {
            message = JSON.parse(line).msg ?? line
          } catch {
            // not a JSON log line; look at it as text
          }
          if (typeof message === 'string' && message.includes('hangar listening on')) {
            clearTimeout(timer)
            server.child.stdout.off('data', onData)
            resolve(message)
            return
          }
        }
      }
      server.child.stdout.on('data', onData)
      server.exited.then((result) => {
        clearTimeout(timer)
        reject(new CheckError(`${label} wait for "hangar listening on"`, `the server ${describeExit(result)} before it was ready`, output()))
      })
    })
    const loggedPort = /:(\d+)\s*$/.exec(listening)?.[1]
    if (loggedPort !== String(port)) {
      throw new CheckError(`${label} wait for "hangar listening on"`, `it says "${listening}", not port ${port}: the ENV port was not honoured`, output())
    }
    log(`${label} ready after ${seconds(Date.now() - started)}: ${listening}`)

    const url = `http://127.0.0.1:${port}/ok`
    let answer
    try {
      answer = await httpGet(url)
    } catch (error) {
      throw new CheckError(`${label} GET ${url}`, messageOf(error), output())
    }
    let body
    try {
      body = JSON.parse(answer.body)
    } catch {
      body = undefined
    }
    if (answer.status !== 200 || body?.ok !== true || Object.keys(body).length !== 1) {
      throw new CheckError(`${label} GET ${url}`, `expected 200 {"ok":true}, got ${answer.status} ${answer.body}`, output())
    }
    log(`${label} GET /ok -> ${answer.status} ${answer.body.trim()}`)

    // The inspector page: its markup and styles come from ui/, its scripts from the build (dist/ui).
    for (const asset of ['/_hangar/ui', '/_hangar/ui/style.css', '/_hangar/ui/main.js']) {
      let page
      try {
        page = await httpGet(`http://127.0.0.1:${port}${asset}`)
      } catch (error) {
        throw new CheckError(`${label} GET ${asset}`, messageOf(error), output())
      }
      if (page.status !== 200 || page.body.length === 0) throw new CheckError(`${label} GET ${asset}`, `expected 200 with a body, got ${page.status} ${page.body.slice(0, 200)}`, output())
    }
    log(`${label} GET /_hangar/ui, its style sheet and its script -> 200`)

    const checkArgv = check.exec ?? ['sh', '-c', check.shell]
    const health = await runToEnd(checkArgv, { cwd, env: containerEnv }, check.timeoutMs)
    if (health.error || health.code !== 0) {
      throw new CheckError(`${label} HEALTHCHECK (line ${check.line}): ${check.exec ? JSON.stringify(check.exec) : check.shell}`, `the check ${describeExit(health)}`, `${childOutput(health, 'healthcheck ')}\n${output()}`)
    }
    log(`${label} HEALTHCHECK exit 0 in ${seconds(health.ms)} (timeout ${check.timeoutMs / 1000} s; ${check.exec ? 'exec form' : 'sh -c, exactly as written'})`)

    const stopping = Date.now()
    process.kill(/** @type {number} */ (server.child.pid), 'SIGTERM') // it is running: it logged its ready line
    /** @type {NodeJS.Timeout | undefined} */
    let stopTimer
    const result = await Promise.race([server.exited, /** @type {Promise<null>} */ (new Promise((resolve) => (stopTimer = setTimeout(() => resolve(null), STOP_TIMEOUT_MS))))])
    clearTimeout(stopTimer)
    if (result === null) throw new CheckError(`${label} SIGTERM`, `still running ${STOP_TIMEOUT_MS / 1000} s after SIGTERM`, output())
    if (result.code !== 0) throw new CheckError(`${label} SIGTERM`, `the server ${describeExit(result)} (expected 0)`, output())
    log(`${label} SIGTERM -> exit 0 in ${seconds(Date.now() - stopping)}`)
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      killGroup(server.child, 'SIGKILL')
      await server.exited
    }
  }

  // Every ENV path that was mapped onto a VOLUME: HANGAR_DB's SQLite file must be there.
  const volumeHosts = stage.volumes.map((volume) => onHost(root, volume))
  const onVolume = Object.entries(env).filter(([, value]) => volumeHosts.some((dir) => value.startsWith(`${dir}${path.sep}`)))
  for (const [key, file] of onVolume) {
    if (!fs.existsSync(file)) {
      throw new CheckError(`${label} volume`, `${key}=${file} does not exist after the run; the volume holds: ${fs.readdirSync(path.dirname(file)).join(', ') || '(nothing)'}`)
    }
    const header = Buffer.alloc(16)
    const fd = fs.openSync(file, 'r')
    fs.readSync(fd, header, 0, 16, 0)
    fs.closeSync(fd)
    const sqlite = header.toString('latin1') === 'SQLite format 3\0'
    if (key === 'HANGAR_DB' && !sqlite) throw new CheckError(`${label} volume`, `${file} is not an SQLite database`)
    log(`${label} volume: ${key} -> ${file} exists (${fs.statSync(file).size} bytes${sqlite ? ', SQLite' : ''})`)
  }
}

async function main() {
  if (!fs.existsSync(dockerfilePath)) throw new CheckError('read Dockerfile', `${dockerfilePath} does not exist`)
  const stages = parseDockerfile(fs.readFileSync(dockerfilePath, 'utf8'))
  // BuildKit looks for <Dockerfile>.dockerignore beside the Dockerfile first, then the context's.
  const ignoreFile = fs.existsSync(`${dockerfilePath}.dockerignore`) ? `${dockerfilePath}.dockerignore` : path.join(contextDir, '.dockerignore')
  const ignore = loadIgnore(ignoreFile)
  log(`Dockerfile ${dockerfilePath}: ${stages.length} stage${stages.length === 1 ? '' : 's'}; context ${contextDir}; ${ignore.rules.length} ignore rules from ${fs.existsSync(ignoreFile) ? ignoreFile : '(no .dockerignore)'}`)

  /** @type {Map<string, Stage>} */
  const stagesByName = new Map()
  for (const stage of stages) {
    if (stage.name) stagesByName.set(stage.name, stage)
    stagesByName.set(String(stage.index), stage)
  }
  // Build only what the final stage needs, as BuildKit does.
  const final = /** @type {Stage} */ (stages.at(-1)) // parseDockerfile() refuses a file without a stage
  final.label = final.name ?? 'runtime'
  /** @type {Set<Stage>} */
  const needed = new Set()
  /** @param {Stage} stage */
  const need = (stage) => {
    if (needed.has(stage)) return
    needed.add(stage)
    for (const op of stage.ops) {
      if (op.keyword !== 'COPY' || op.from === null) continue
      const from = stagesByName.get(op.from)
      if (!from) throw parseError(op.line, `COPY --from=${op.from}: no such stage (external images are not supported by docker-check)`)
      if (from.index >= stage.index) throw parseError(op.line, `COPY --from=${op.from}: that stage is not an earlier one`)
      need(from)
    }
  }
  need(final)

  preflight(stages, needed, final, ignore)

  const hostMajor = process.versions.node.split('.')[0]
  /** @type {Map<Stage, string>} */
  const stageRoots = new Map()
  /** @type {MapEnv | undefined} */
  let mapEnv
  for (const stage of stages) {
    if (!needed.has(stage)) {
      log(`[${stage.label}] FROM ${stage.image}: not needed by the final stage, skipped`)
      continue
    }
    const root = makeTemp(stage.label.replace(/[^A-Za-z0-9_.-]/g, '-'))
    stageRoots.set(stage, root)
    const imageMajor = /^node:(\d+)/.exec(stage.image)?.[1]
    const note = imageMajor && imageMajor !== hostMajor ? `; WARNING: this machine's Node ${process.versions.node} is not the image's Node ${imageMajor}` : ''
    log(`[${stage.label}] FROM ${stage.image} -> ${root} (this machine's node v${process.versions.node} stands in for the image${note})`)
    ;({ mapEnv } = await buildStage(stage, root, stageRoots, stagesByName, ignore))
  }
  // The final stage is needed, so the loop built it, last: its directory and its ENV mapping are set.
  await startFinal(final, /** @type {string} */ (stageRoots.get(final)), /** @type {MapEnv} */ (mapEnv))
}

function cleanup() {
  for (const child of children) killGroup(child, 'SIGKILL')
  if (keep) {
    for (const dir of tempDirs) log(`kept ${dir} (KEEP=1)`)
    return
  }
  for (const dir of tempDirs) {
    try {
      // retries: a child killed a moment ago may still be writing into the directory
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
    } catch (error) {
      console.error(`docker-check: could not remove ${dir}: ${messageOf(error)}`)
    }
  }
  tempDirs.length = 0
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    log(`interrupted by ${signal}`)
    cleanup()
    process.exit(1)
  })
}

const began = Date.now()
try {
  await main()
  cleanup()
  log(`total ${seconds(Date.now() - began)}${keep ? '' : ', temporary directories removed'}`)
  log('ok')
  process.exitCode = 0
} catch (error) {
  if (error instanceof CheckError) {
    console.error(`docker-check: FAILED at ${error.step}: ${error.message}`)
    if (error.output) console.error(error.output)
  } else {
    console.error(`docker-check: FAILED (internal error): ${(error instanceof Error && error.stack) || error}`)
  }
  cleanup()
  console.error(`docker-check: failed after ${seconds(Date.now() - began)}`)
  process.exitCode = 1
}
