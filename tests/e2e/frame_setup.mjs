/**
 * What the live-frame browser tests share (frames, sheet, table): a cast, a production and a
 * frame made through the REST API; another person's browser (a fresh context, its socket
 * frames recorded); screenshots of every browser on a failed step; and the player's moves
 * (write an intention and read its verdict, commit it, wait for an outcome or a narrative).
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { TIMEOUT, api, eventually, expectText, expectVisible, unique } from './harness.mjs'

/** A marker no other test (or run) writes: `WHO-MARK-<random>`. */
export const mark = (who) => `${who}-MARK-${unique('x').slice(2)}`

// --- set-up through the API ------------------------------------------------------------------

/**
 * World, scenario, personas and assistants (on the offline narrator unless a member names
 * its `model` id), and a production. Each member is `{name, fields?, model?}`: `fields`
 * (known_as, internal_truth, affiliations…) override the persona's defaults. Sets `member.persona` and `member.assistant`.
 */
export async function createCast(page, cast, { world = 'A rainy harbour town.', scenario = 'Three strangers share a table at the harbour inn.' } = {}) {
  const worldRow = await api(page, 'POST', '/api/worlds', { name: unique('World'), description: world })
  const scenarioRow = await api(page, 'POST', '/api/scenarios', { name: unique('Scenario'), description: scenario })
  const offline = (await api(page, 'GET', '/api/models')).find((m) => m.api_endpoint === 'offline://narrator')
  assert.ok(offline, 'the new user has no Offline Narrator model')
  for (const member of cast) {
    const short = member.name.slice(0, 40)
    const persona = await api(page, 'POST', '/api/personas', {
      name: member.name,
      universal_truth: `${short} is a traveller.`,
      internal_truth: `${short} hides a stolen map.`,
      external_truth: `Others think ${short} is a merchant.`,
      ...member.fields,
    })
    member.persona = persona.id
    member.assistant = (await api(page, 'POST', '/api/assistants', { persona: persona.id, model: member.model ?? offline.id })).id
  }
  const production = await api(page, 'POST', '/api/productions', {
    name: unique('Harbour Night'),
    world: worldRow.id,
    scenario: scenarioRow.id,
    assistants: cast.map((m) => m.assistant),
    show_directive: false,
  })
  return { world: worldRow, scenario: scenarioRow, production, offline }
}

/**
 * A frame of `production` (POST /api/productions/<id>/frames with `body`: name, tempo,
 * liquid_visibility, open_seats…; the cast not in `open_seats` plays as AI). Sets each
 * member's `seat`; returns the frame's view.
 */
export async function startFrame(page, production, cast, body) {
  const view = await api(page, 'POST', `/api/productions/${production.id}/frames`, body)
  for (const member of cast) member.seat = view.seats.find((s) => s.persona === member.persona)?.id
  assert.ok(cast.every((m) => m.seat), `seats not found by persona: ${JSON.stringify(view.seats)}`)
  return view
}

/** Take `seat` with the frame's invite code (the page's user; the join page is frames.test's). */
export const joinSeat = (page, inviteCode, seat) => api(page, 'POST', '/api/frames/join', { invite_code: inviteCode, seat })

// --- other people's browsers -------------------------------------------------------------------

/** Record what the page's frame sockets receive (`{raw, msg}`, parsed), from now on. */
export function recordSocket(page, { url = '/ws/' } = {}) {
  const frames = []
  page.on('websocket', (ws) => {
    if (!ws.url().includes(url)) return
    ws.on('framereceived', ({ payload }) => {
      const raw = typeof payload === 'string' ? payload : payload.toString('utf8')
      let msg = null
      try {
        msg = JSON.parse(raw)
      } catch {
        /* not JSON */
      }
      frames.push({ raw, msg })
    })
  })
  return frames
}

/**
 * Another person's browser: a fresh context (own cookies) whose pages run `init` scripts
 * before their own (they survive a reload); its first page's frame sockets recorded.
 * Closed by the caller.
 */
export async function openBrowser(suite, { viewport = { width: 1366, height: 900 }, init = [], permissions = [] } = {}) {
  const context = await suite.browser.newContext({ baseURL: suite.baseURL, viewport })
  context.setDefaultTimeout(TIMEOUT)
  context.setDefaultNavigationTimeout(30_000)
  if (permissions.length) await context.grantPermissions(permissions, { origin: suite.baseURL })
  for (const script of init) await context.addInitScript(script)
  const page = await context.newPage()
  const errors = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`))
  const frames = recordSocket(page, { url: '/ws/frames/' })
  return { context, page, errors, frames }
}

/** On a failure, the harness shoots the test's own page; this shoots the other browsers. */
export async function shootOthers(suite, label, people) {
  for (const [who, person] of Object.entries(people)) {
    if (!person?.page) continue
    const file = path.join(suite.dataDir, `${label.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}-${who}.png`)
    try {
      await person.page.screenshot({ path: file, fullPage: true, timeout: 10_000 })
      process.stderr.write(`[e2e] ${who}'s page: ${person.page.url()}\n[e2e] ${who}'s screenshot: ${file}\n`)
      if (person.errors?.length) process.stderr.write(`[e2e] ${who}'s console errors:\n  ${person.errors.slice(-10).join('\n  ')}\n`)
    } catch {
      /* the page may be gone */
    }
  }
}

/** The harness's `step`, also shooting the other browsers (`people`) when it fails. */
export const shootingStep = (suite, harnessStep, people) => (name, fn, opts) =>
  harnessStep(
    name,
    async () => {
      try {
        await fn()
      } catch (error) {
        await shootOthers(suite, name, people)
        throw error
      }
    },
    opts,
  )

// --- a player's moves ----------------------------------------------------------------------------

export const composer = (page) => page.getByTestId('composer')
export const myLiquidCard = (page, text) => composer(page).getByTestId('liquid-card').filter({ hasText: text })

/** Write an intention, submit it, and wait for its soft verdict; returns the card. */
export async function writeIntention(page, text) {
  const input = page.getByTestId('composer-input')
  await expectVisible(input)
  await input.fill(text)
  await page.getByTestId('composer-submit').click()
  const card = myLiquidCard(page, text)
  await expectVisible(card)
  assert.equal(await card.getAttribute('data-status'), 'submitted')
  const verdict = card.locator('[data-testid="soft-verdict"]:not([data-pending])')
  await expectVisible(verdict)
  await expectVisible(verdict.getByTestId('pscale-chip'))
  await expectText(verdict.getByTestId('verdict-window'), /window \d+ s/)
  await expectText(verdict.getByTestId('verdict-refined'), text.split(' ').pop().replace(/\.$/, ''))
  return card
}

/** Commit the intention (its card) and wait until it says so. */
export async function commit(page, card) {
  await card.getByTestId('liquid-commit').click()
  await eventually(
    async () => {
      const status = await card.getAttribute('data-status', { timeout: 1000 })
      if (status !== 'committed') throw new Error(`status is ${status}`)
    },
    { message: 'the intention was not committed' },
  )
}

/**
 * The feed's narrative of `seat` holding `marker` (or its last one, without a marker), once
 * done; returns {id, text, locator}.
 */
export async function narrativeDone(page, seat, marker, { timeout = 45_000 } = {}) {
  const all = page.locator(`[data-testid="feed-narrative"][data-seat="${seat}"]`)
  const el = marker ? all.filter({ hasText: marker }) : all.last()
  await eventually(
    async () => {
      if (!(await el.count())) throw new Error('no such narrative yet')
      const status = await el.first().getAttribute('data-status', { timeout: 1000 })
      if (status === 'failed') throw Object.assign(new Error('the narrative failed'), { fatal: true })
      if (status !== 'done') throw new Error(`status is ${status}`)
    },
    { timeout, message: `the narrative ${marker ? `holding ${marker} ` : ''}did not finish` },
  )
  const id = await el.first().getAttribute('data-narrative-id')
  const text = (await el.first().getByTestId('narrative-text').textContent()).trim()
  return { id, text, locator: el.first() }
}

/** The outcome entry holding `marker` (waits for it); returns {id, text}. */
export async function outcomeWith(page, marker, { timeout = 45_000 } = {}) {
  const el = page.getByTestId('feed-outcome').filter({ hasText: marker })
  await expectVisible(el, { timeout })
  await expectText(el.first().getByTestId('result-chip'), 'success')
  return { id: await el.first().getAttribute('data-outcome-id'), text: (await el.first().innerText()).trim() }
}

// --- waiting ---------------------------------------------------------------------------------

/** Poll `read` for `forMs` and fail at once if it changes; resolves with the value held. */
export async function expectSteady(read, forMs, what) {
  const first = await read()
  const until = Date.now() + forMs
  await eventually(
    async () => {
      const now = await read()
      if (now !== first) throw Object.assign(new Error(`${what} changed from ${JSON.stringify(first)} to ${JSON.stringify(now)}`), { fatal: true })
      if (Date.now() < until) throw new Error('still watching')
    },
    { timeout: forMs + TIMEOUT, interval: 150, message: `${what} did not hold still` },
  )
  return first
}

// --- pictures ------------------------------------------------------------------------------------

/**
 * With LMIX_SCREENSHOTS set to a folder, a picture of the page as `name` (`<what>-desktop.png`,
 * `<what>-phone.png`), once its animations have finished (a resized page slides its menu away).
 */
export async function shoot(page, name) {
  if (!process.env.LMIX_SCREENSHOTS) return
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'), null, { timeout: TIMEOUT })
  await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, name) })
}
