/**
 * The browser-test harness: a fresh LMiX server (embedded mode: SQLite, in-process channel
 * layer and broker) per test file, optionally the fake OpenAI-compatible server, and one
 * Chromium per file with a fresh context per test.
 *
 *   import { useLmix, e2e, signUp } from './harness.mjs'
 *   const lmix = useLmix({ fakeLLM: true })
 *   e2e(lmix, 'does a thing', async ({ page }) => { await signUp(page) ... })
 *
 * Everything waits on events or polls with a bound (never a fixed sleep as an assertion).
 * When a test fails the harness saves a screenshot, and prints its path, the browser's
 * console errors and the tail of the server log.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

export const E2E_DIR = path.dirname(fileURLToPath(import.meta.url))
export const REPO = path.resolve(E2E_DIR, '..', '..')
export const PYTHON = path.join(REPO, '.venv', 'bin', 'python')
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const DIST_INDEX = path.join(REPO, 'frontend', 'dist', 'index.html')

/** Bounds: generous, because CI machines are slow and have two cores. */
export const TIMEOUT = 20_000
const SERVER_START_TIMEOUT = 60_000
const MIGRATE_TIMEOUT = 120_000

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

// --- small utilities ----------------------------------------------------------------------

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A name no other test (or run) uses: `prefix-<random>`. */
export function unique(prefix) {
  return `${prefix}-${randomBytes(4).toString('hex')}`
}

/**
 * Retry `fn` until it returns (or resolves) without throwing; then return its value.
 * On timeout, throw the last error, prefixed by `message`. An error with `fatal: true`
 * stops the wait at once.
 */
export async function eventually(fn, { timeout = TIMEOUT, interval = 100, message = 'condition not met' } = {}) {
  const deadline = Date.now() + timeout
  let lastError
  for (;;) {
    try {
      return await fn()
    } catch (e) {
      if (e?.fatal) throw e // no point waiting: it cannot get better
      lastError = e
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? lastError.message : String(lastError)
      const err = new Error(`${message} (after ${timeout} ms): ${detail}`)
      err.cause = lastError
      throw err
    }
    await delay(interval)
  }
}

/** Wait until the locator is visible. */
export async function expectVisible(locator, { timeout = TIMEOUT } = {}) {
  await locator.first().waitFor({ state: 'visible', timeout })
  return locator
}

/** Wait until the locator matches nothing visible. */
export async function expectHidden(locator, { timeout = TIMEOUT } = {}) {
  await eventually(
    async () => {
      const n = await locator.count()
      for (let i = 0; i < n; i++) {
        if (await locator.nth(i).isVisible()) throw new Error(`${locator} is still visible`)
      }
    },
    { timeout, message: `expected ${locator} to be hidden` },
  )
}

/** Wait until the locator's text contains (string) or matches (RegExp) `expected`. Returns the text. */
export async function expectText(locator, expected, { timeout = TIMEOUT } = {}) {
  return eventually(
    async () => {
      const text = (await locator.innerText({ timeout: 1000 })).trim()
      const ok = expected instanceof RegExp ? expected.test(text) : text.includes(expected)
      if (!ok) throw new Error(`text was ${JSON.stringify(text.slice(0, 400))}`)
      return text
    },
    { timeout, message: `expected ${locator} to show ${expected}` },
  )
}

/** Wait until the locator matches exactly `n` elements. */
export async function expectCount(locator, n, { timeout = TIMEOUT } = {}) {
  await eventually(
    async () => {
      const count = await locator.count()
      if (count !== n) throw new Error(`found ${count}`)
    },
    { timeout, message: `expected ${n} of ${locator}` },
  )
}

/** Wait until the page's path (no query) is `pathname` (string or RegExp). */
export async function expectPath(page, pathname, { timeout = TIMEOUT } = {}) {
  await eventually(
    () => {
      const current = new URL(page.url()).pathname
      const ok = pathname instanceof RegExp ? pathname.test(current) : current === pathname
      if (!ok) throw new Error(`path is ${current}`)
      return current
    },
    { timeout, message: `expected the path ${pathname}` },
  )
}

// --- network idle ---------------------------------------------------------------------------

const inflight = new WeakMap()

function trackRequests(page) {
  const pending = new Set()
  inflight.set(page, pending)
  page.on('request', (r) => pending.add(r))
  page.on('requestfinished', (r) => pending.delete(r))
  page.on('requestfailed', (r) => pending.delete(r))
}

/**
 * Wait until the page has had no HTTP request in flight for `idleMs` (websockets do not
 * count). Pages made by `e2e()` are tracked; others only wait for the load state.
 */
export async function networkIdle(page, { idleMs = 300, timeout = TIMEOUT } = {}) {
  const pending = inflight.get(page)
  if (!pending) {
    await page.waitForLoadState('networkidle', { timeout })
    return
  }
  const deadline = Date.now() + timeout
  let quietSince = pending.size ? null : Date.now()
  for (;;) {
    if (pending.size) quietSince = null
    else if (quietSince === null) quietSince = Date.now()
    if (quietSince !== null && Date.now() - quietSince >= idleMs) return
    if (Date.now() > deadline) {
      const urls = [...pending].map((r) => r.url()).join(', ')
      throw new Error(`network not idle after ${timeout} ms; still loading: ${urls}`)
    }
    await delay(50)
  }
}

// --- processes ------------------------------------------------------------------------------

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

function tail(file, lines = 60) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n')
  } catch {
    return '(no log)'
  }
}

/** The environment of embedded mode, whatever CI exported (PostgreSQL, Redis). */
function embeddedEnv(dataDir) {
  const env = { ...process.env }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'CELERY_BROKER_URL', 'DJANGO_SETTINGS_MODULE']) delete env[name]
  return {
    ...env,
    LMIX_DATA_DIR: dataDir,
    ALLOWED_HOSTS: '127.0.0.1,localhost',
    DEBUG: 'false',
    SECURE_COOKIES: 'false',
    PYTHONUNBUFFERED: '1',
    // Slow the offline narrator's stream down enough for a browser to watch it grow.
    LMIX_OFFLINE_STREAM_DELAY: process.env.LMIX_OFFLINE_STREAM_DELAY ?? '0.04',
  }
}

/** Run a command to completion, output appended to `logFile`; reject on failure or timeout. */
function run(cmd, args, { cwd, env, logFile, timeout }) {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(logFile, 'a')
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', fd, fd], detached: true })
    fs.closeSync(fd)
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL')
      reject(new Error(`${path.basename(cmd)} ${args.join(' ')} timed out after ${timeout} ms\n${tail(logFile)}`))
    }, timeout)
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${code ?? signal})\n${tail(logFile)}`))
    })
  })
}

function killGroup(child, signal) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, signal) // the whole group: daphne, the embedded worker…
  } catch {
    try {
      child.kill(signal)
    } catch {
      /* already gone */
    }
  }
}

/** SIGTERM the process group, then SIGKILL if it is still there after `grace` ms. */
export async function stopProcess(child, grace = 10_000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  killGroup(child, 'SIGTERM')
  const timer = new Promise((resolve) => setTimeout(() => resolve('timeout'), grace))
  if ((await Promise.race([exited, timer])) === 'timeout') {
    killGroup(child, 'SIGKILL')
    await Promise.race([exited, delay(2000)])
  }
}

const children = new Set()
process.on('exit', () => {
  for (const child of children) killGroup(child, 'SIGKILL')
})

/**
 * Migrate a fresh SQLite database in `dataDir` and serve LMiX on a free port.
 * Resolves once GET /api/auth/csrf answers 200.
 */
export async function startLmix(dataDir) {
  if (!fs.existsSync(DIST_INDEX)) {
    throw new Error(
      `The SPA is not built: ${DIST_INDEX} is missing. Build it first: \`make frontend/dist/index.html\` ` +
        '(or `cd frontend && npm run build`).',
    )
  }
  if (!fs.existsSync(PYTHON)) throw new Error(`No Python venv at ${PYTHON}: run \`make test\` (or \`uv sync\`) first.`)
  const env = embeddedEnv(dataDir)
  const logFile = path.join(dataDir, 'server.log')
  const migrateLog = path.join(dataDir, 'migrate.log')
  await run(PYTHON, ['manage.py', 'migrate', '--noinput'], { cwd: REPO, env, logFile: migrateLog, timeout: MIGRATE_TIMEOUT })

  const port = await freePort()
  const baseURL = `http://127.0.0.1:${port}`
  const fd = fs.openSync(logFile, 'a')
  const child = spawn(PYTHON, ['manage.py', 'serve', '--host', '127.0.0.1', '--port', String(port), '--quiet'], {
    cwd: REPO,
    env,
    stdio: ['ignore', fd, fd],
    detached: true,
  })
  fs.closeSync(fd)
  children.add(child)
  child.on('exit', () => children.delete(child))

  const deadline = Date.now() + SERVER_START_TIMEOUT
  let last = ''
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`LMiX exited before answering (${child.exitCode ?? child.signalCode}).\n${tail(logFile)}`)
    }
    try {
      const res = await fetch(`${baseURL}/api/auth/csrf`, { signal: AbortSignal.timeout(2000) })
      if (res.status === 200) break
      last = `HTTP ${res.status}`
    } catch (e) {
      last = e.message
    }
    if (Date.now() > deadline) {
      await stopProcess(child)
      throw new Error(`LMiX did not answer GET /api/auth/csrf within ${SERVER_START_TIMEOUT} ms (${last}).\n${tail(logFile)}`)
    }
    await delay(250)
  }
  return { baseURL, child, logFile }
}

/**
 * The fake OpenAI-compatible server (tests/fakes/llm_server.py); resolves with its base URL.
 * `delay`: seconds before every answer (a model seen "thinking").
 */
export async function startFakeLLM(dataDir, { delay = 0, structured = null } = {}) {
  const logFile = path.join(dataDir, 'fake-llm.log')
  const args = [
    '-m',
    'tests.fakes.llm_server',
    '--port',
    '0',
    ...(delay ? ['--delay', String(delay)] : []),
    // The JSON answer to every structured request (a bones answer, say).
    ...(structured ? ['--structured', JSON.stringify(structured)] : []),
  ]
  const child = spawn(PYTHON, args, {
    cwd: REPO,
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  children.add(child)
  child.on('exit', () => children.delete(child))
  const log = fs.createWriteStream(logFile)
  child.stderr.pipe(log)
  const lines = readline.createInterface({ input: child.stdout })
  const baseURL = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the fake LLM server printed no LISTENING line.\n${tail(logFile)}`)), TIMEOUT)
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the fake LLM server exited (${code}).\n${tail(logFile)}`))
    })
    lines.on('line', (line) => {
      log.write(`${line}\n`)
      const m = /^LISTENING\s+(\S+)/.exec(line)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
  })
  return { baseURL, child }
}

// --- the per-file suite -----------------------------------------------------------------------

/**
 * Register the file's before/after hooks: a temp dir, LMiX (and the fake LLM server when
 * asked: `fakeLLM` true, or its options, e.g. `{delay: 1.5}`), and Chromium. Returns an
 * object whose fields are filled in `before`: baseURL, fakeLLMURL, dataDir, logFile, browser.
 */
export function useLmix({ fakeLLM = false } = {}) {
  const suite = { baseURL: '', fakeLLMURL: '', dataDir: '', logFile: '', browser: null, failures: 0 }
  let server = null
  let fake = null
  let ready = false

  before(
    async () => {
      suite.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lmix-e2e-'))
      const launching = chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
      launching.then((b) => (suite.browser = b)).catch(() => {}) // closed in `after` whatever happens
      const [lmix, llm] = await Promise.all([startLmix(suite.dataDir), fakeLLM ? startFakeLLM(suite.dataDir, fakeLLM === true ? {} : fakeLLM) : null])
      server = lmix
      fake = llm
      suite.baseURL = lmix.baseURL
      suite.logFile = lmix.logFile
      suite.fakeLLMURL = llm?.baseURL ?? ''
      suite.browser = await launching
      ready = true
    },
    { timeout: MIGRATE_TIMEOUT + SERVER_START_TIMEOUT + 30_000 },
  )

  after(
    async () => {
      await suite.browser?.close().catch(() => {})
      // Every process this file started, even when `before` failed half-way.
      await Promise.all([...new Set([server?.child, fake?.child, ...children])].filter(Boolean).map((c) => stopProcess(c)))
      if (suite.failures || !ready) process.stderr.write(`\n[e2e] kept ${suite.dataDir} (server log, screenshots)\n`)
      else if (suite.dataDir) fs.rmSync(suite.dataDir, { recursive: true, force: true })
    },
    { timeout: 30_000 },
  )

  return suite
}

/** Print what helps to debug a failure: screenshot path, console errors, the server log. */
async function reportFailure(suite, name, page, consoleErrors) {
  suite.failures++
  const shot = path.join(suite.dataDir, `${suite.failures}-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.png`)
  let where = ''
  try {
    where = page.url()
    await page.screenshot({ path: shot, fullPage: true, timeout: 10_000 })
  } catch {
    /* the page may be gone */
  }
  process.stderr.write(
    [
      '',
      `[e2e] FAILED: ${name}`,
      `[e2e] page: ${where}`,
      `[e2e] screenshot: ${shot}`,
      `[e2e] browser console errors:${consoleErrors.length ? `\n  ${consoleErrors.slice(-20).join('\n  ')}` : ' none'}`,
      `[e2e] server log (${suite.logFile}), last lines:`,
      tail(suite.logFile, 40),
      '',
    ].join('\n'),
  )
}

/**
 * One browser test: a fresh context and page (tracked for networkIdle), handed to `fn`
 * with `step(name, fn)`, which runs `fn` as a subtest (reported on its own; later steps
 * still run when one fails) and resolves true when it passed.
 * On failure: a screenshot (path printed), console errors and the server log's tail.
 */
export function e2e(suite, name, fn, { timeout = 90_000 } = {}) {
  test(name, { timeout }, async (t) => {
    const context = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 1366, height: 900 } })
    context.setDefaultTimeout(TIMEOUT)
    context.setDefaultNavigationTimeout(30_000)
    const page = await context.newPage()
    trackRequests(page)
    const consoleErrors = []
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text())
    })
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`))
    const step = async (stepName, stepFn, { timeout: stepTimeout = 60_000 } = {}) => {
      let passed = false
      await t.test(stepName, { timeout: stepTimeout }, async () => {
        try {
          await stepFn()
          passed = true
        } catch (error) {
          await reportFailure(suite, `${name} › ${stepName}`, page, consoleErrors)
          throw error
        }
      })
      return passed
    }
    try {
      await fn({ page, context, t, suite, step })
    } catch (error) {
      await reportFailure(suite, name, page, consoleErrors)
      throw error
    } finally {
      await context.close().catch(() => {})
    }
  })
}

// --- app helpers ------------------------------------------------------------------------------

/** A password Django's validators accept. */
export const newPassword = () => `e2e-${randomBytes(6).toString('hex')}-Pw!`

/** Sign up through the UI; ends signed in on the dashboard. Returns the credentials. */
export async function signUp(page, { username = unique('user'), password = newPassword() } = {}) {
  await page.goto('/signup')
  const form = page.getByTestId('signup-form')
  await expectVisible(form)
  await form.getByLabel('Username').fill(username)
  await form.getByLabel('Password', { exact: true }).fill(password)
  await form.getByRole('button', { name: 'Sign up' }).click()
  await expectPath(page, '/')
  await expectText(page.getByTestId('user-menu'), username)
  return { username, password }
}

/** Log in through the UI (from wherever the login page sends you back). */
export async function logIn(page, { username, password }, { goto = true } = {}) {
  if (goto) await page.goto('/login')
  const form = page.getByTestId('login-form')
  await expectVisible(form)
  await form.getByLabel('Username').fill(username)
  await form.getByLabel('Password', { exact: true }).fill(password)
  await form.getByRole('button', { name: 'Log in' }).click()
  await expectText(page.getByTestId('user-menu'), username)
}

/** Log out through the user menu; ends on the login page. */
export async function logOut(page) {
  await page.getByTestId('user-menu').click()
  await page.getByRole('menuitem', { name: 'Log out' }).click()
  await expectPath(page, '/login')
  await expectVisible(page.getByTestId('login-form'))
}

/**
 * Call the API from the page (same origin, the page's session cookie, the CSRF header).
 * Returns the parsed body; throws on a non-2xx answer unless `allowError`.
 */
export async function api(page, method, url, body, { allowError = false } = {}) {
  const res = await page.evaluate(
    async ({ method, url, body }) => {
      const cookie = () => document.cookie.split('; ').find((c) => c.startsWith('csrftoken='))?.split('=')[1]
      if (!cookie()) await fetch('/api/auth/csrf', { credentials: 'same-origin' })
      const headers = { Accept: 'application/json' }
      if (body !== undefined) headers['Content-Type'] = 'application/json'
      if (!['GET', 'HEAD', 'OPTIONS'].includes(method)) headers['X-CSRFToken'] = decodeURIComponent(cookie() ?? '')
      const r = await fetch(url, {
        method,
        headers,
        credentials: 'same-origin',
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await r.text()
      let data = text
      try {
        data = text ? JSON.parse(text) : null
      } catch {
        /* not JSON */
      }
      return { status: r.status, data }
    },
    { method, url, body },
  )
  if (!allowError && (res.status < 200 || res.status >= 300)) {
    throw new Error(`${method} ${url} answered ${res.status}: ${JSON.stringify(res.data).slice(0, 500)}`)
  }
  return allowError ? res : res.data
}

/** Choose the <option> whose text contains `text` (labels carry suffixes like " ★"). */
export async function selectByText(select, text) {
  const value = await eventually(
    async () => {
      const options = await select.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, text: o.textContent ?? '' })))
      const hit = options.find((o) => o.value && o.text.includes(text))
      if (!hit) throw new Error(`options are ${JSON.stringify(options.map((o) => o.text.trim()))}`)
      return hit.value
    },
    { message: `no option containing ${JSON.stringify(text)}` },
  )
  await select.selectOption(value)
  return value
}

/** Click a sidebar link (data-testid nav-<key>) and wait for its page. */
export async function navigate(page, key, pathname) {
  await page.getByTestId(`nav-${key}`).click()
  await expectPath(page, pathname)
  await networkIdle(page)
}
