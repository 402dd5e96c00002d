/**
 * Table talk and the spectator link (issue 25, item 15), in several browser contexts:
 * a player takes a covert character's seat and the GM's table talk says so at once, with
 * the time and the character's public name only; what is said shows its time too; the GM
 * removing the player is a notice as well. A signed-out browser opens the spectator link:
 * a bare page offering to log in or sign up, the outcomes as they happen (a player's and
 * the GM's narration), and never a word of table talk, on the page or on its socket.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { TIMEOUT, api, e2e, eventually, expectCount, expectText, expectVisible, signUp, unique, useLmix } from './harness.mjs'

const lmix = useLmix()

const mark = (who) => `${who}-MARK-${unique('x').slice(2)}`

/** A fresh browser context (its own cookies: signed out until it signs up). */
async function openBrowser(suite) {
  const context = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 1366, height: 900 } })
  context.setDefaultTimeout(TIMEOUT)
  context.setDefaultNavigationTimeout(30_000)
  const page = await context.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  return { context, page, errors }
}

/** With LMIX_SCREENSHOTS set to a folder, `page` at 1366 and 390 px wide as `name`-desktop/-phone. */
async function pictures(page, name, locator) {
  const dir = process.env.LMIX_SCREENSHOTS
  if (!dir) return
  fs.mkdirSync(dir, { recursive: true })
  const viewport = page.viewportSize()
  for (const [device, size] of [
    ['desktop', { width: 1366, height: 900 }],
    ['phone', { width: 390, height: 844 }],
  ]) {
    await page.setViewportSize(size)
    await page.waitForTimeout(300) // the layout settles after a resize (a picture, not a test)
    const file = path.join(dir, `${name}-${device}.png`)
    await (locator ? locator.screenshot({ path: file }) : page.screenshot({ path: file }))
  }
  await page.setViewportSize(viewport)
}

/** Every message the page's spectator sockets receive, parsed, from now on. */
function recordSpectatorSocket(page) {
  const heard = []
  page.on('websocket', (ws) => {
    if (!ws.url().includes('/ws/spectate/')) return
    ws.on('framereceived', ({ payload }) => {
      try {
        heard.push(JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8')))
      } catch {
        /* not JSON */
      }
    })
  })
  return heard
}

e2e(lmix, 'talk: join and removal notices with times; a signed-out spectator sees outcomes live and no table talk', async ({ page: gm, suite, step }) => {
  const people = []
  let frameId
  let seatId
  let inviteCode
  let spectatorCode
  let player
  let username

  try {
    await signUp(gm)
    const ready = await step('the GM starts a frame: Bob Marsh, known as The Porter, waits for a player; spectators are allowed', async () => {
      const world = await api(gm, 'POST', '/api/worlds', { name: unique('World'), description: 'A rainy harbour town.' })
      const scenario = await api(gm, 'POST', '/api/scenarios', { name: unique('Scenario'), description: 'A ship docks late.' })
      const offline = (await api(gm, 'GET', '/api/models')).find((m) => m.api_endpoint === 'offline://narrator')
      const assistants = []
      let bob
      for (const [name, knownAs] of [
        ['Bob Marsh', 'The Porter'],
        ['Carol Vance', ''],
      ]) {
        const persona = await api(gm, 'POST', '/api/personas', {
          name,
          known_as: knownAs,
          universal_truth: `${name} works at the docks.`,
          internal_truth: `${name} hides a stolen map.`,
          external_truth: `Others think ${name} is harmless.`,
        })
        bob ??= persona
        assistants.push((await api(gm, 'POST', '/api/assistants', { persona: persona.id, model: offline.id })).id)
      }
      const production = await api(gm, 'POST', '/api/productions', { name: unique('Talk'), world: world.id, scenario: scenario.id, assistants, show_directive: false })
      const view = await api(gm, 'POST', `/api/productions/${production.id}/frames`, { name: 'Harbour talk', open_seats: [bob.id], tempo: 0.4 })
      frameId = view.id
      inviteCode = view.invite_code
      seatId = view.seats.find((s) => s.persona === bob.id).id
      spectatorCode = (await api(gm, 'POST', `/api/frames/${frameId}/spectators`, { enabled: true })).spectator_code
      assert.ok(spectatorCode)
      await gm.goto(`/frames/${frameId}/gm`)
      await expectVisible(gm.getByTestId('table-talk'))
    })
    if (!ready) return

    await step('a player takes the seat: the GM’s table talk says so at once, with the time and the public name only', async () => {
      player = await openBrowser(suite)
      people.push(player)
      ;({ username } = await signUp(player.page))
      await api(player.page, 'POST', '/api/frames/join', { invite_code: inviteCode, seat: seatId })
      const notice = gm.getByTestId('talk-notice').filter({ hasText: 'joined as' })
      await expectText(notice, `${username} joined as The Porter`)
      const time = notice.getByTestId('talk-time')
      await expectText(time, 'just now')
      assert.ok((await time.getAttribute('title'))?.trim(), 'the exact time is not on hover')
      assert.ok(await time.getAttribute('datetime'))
      const talk = await gm.getByTestId('table-talk').innerText()
      assert.ok(!talk.includes('Bob Marsh'), 'the covert character’s real name is in a notice')

      // What the player says shows its time too, on both pages, apart from the notices.
      await player.page.goto(`/frames/${frameId}`)
      await player.page.getByTestId('talk-input').fill('Hello, table!')
      await player.page.getByTestId('talk-input').press('Enter')
      const said = gm.getByTestId('talk-message').filter({ hasText: 'Hello, table!' })
      await expectText(said.getByTestId('talk-time'), 'just now')
      await expectText(player.page.getByTestId('talk-notice'), `${username} joined as The Porter`)
    })

    await step('a signed-out browser opens the spectator link: a bare page that offers to log in or sign up', async () => {
      const visitor = await openBrowser(suite)
      people.push(visitor)
      const heard = recordSpectatorSocket(visitor.page)
      await visitor.page.goto(`/watch/${spectatorCode}`)
      await expectText(visitor.page.getByTestId('spectate-name'), 'Harbour talk')
      await expectVisible(visitor.page.getByTestId('spectate-guest'))
      await expectText(visitor.page.getByTestId('spectate-connection'), 'live')
      const login = await visitor.page.getByTestId('spectate-login').getAttribute('href')
      assert.equal(new URL(login, suite.baseURL).searchParams.get('redirect'), `/watch/${spectatorCode}`) // back here
      await expectVisible(visitor.page.getByTestId('spectate-signup'))
      assert.equal(await visitor.page.getByTestId('table-talk').count(), 0)
      assert.equal(new URL(visitor.page.url()).pathname, `/watch/${spectatorCode}`) // not sent to log in

      // Outcomes arrive live: the GM's narration, then the player's committed intention.
      const told = mark('TOLD')
      await api(gm, 'POST', `/api/frames/${frameId}/narration`, { text: `A bell rings. ${told}` })
      await expectVisible(visitor.page.getByTestId('feed-outcome').filter({ hasText: told }))
      const acted = mark('ACTED')
      const said = mark('SAID')
      await api(player.page, 'POST', `/api/frames/${frameId}/talk`, { text: `brb ${said}` })
      const liquid = await api(player.page, 'POST', `/api/frames/${frameId}/liquid`, { seat: seatId, content: `I wave at the ship ${acted}.` })
      await eventually(
        async () => {
          const view = await api(player.page, 'GET', `/api/frames/${frameId}`)
          if (view.liquid.find((l) => l.id === liquid.id)?.pscale == null) throw new Error('no soft verdict yet')
        },
        { timeout: 30_000, message: 'the intention got no soft verdict' },
      )
      await api(player.page, 'POST', `/api/liquid/${liquid.id}/commit`)
      await expectVisible(visitor.page.getByTestId('feed-outcome').filter({ hasText: acted }), { timeout: 45_000 })
      await expectVisible(gm.getByTestId('talk-message').filter({ hasText: said })) // the table heard it

      const page = await visitor.page.content()
      assert.ok(!page.includes(said) && !page.includes('Hello, table!'), 'table talk on the spectator page')
      assert.ok(!heard.some((m) => m.type === 'talk.created'), 'table talk on the spectator socket')
      assert.ok(heard.some((m) => m.type === 'outcome.created'))
      assert.deepEqual(visitor.errors, [])
      await pictures(visitor.page, 'spectator-guest')
    })

    await step('the GM removes the player: the table talk says so', async () => {
      await api(gm, 'PATCH', `/api/frames/${frameId}/seats/${seatId}`, { controller: 'open' })
      await expectText(gm.getByTestId('talk-notice').filter({ hasText: 'removed' }), `The GM removed ${username} from The Porter's seat`)
      await gm.reload()
      await expectCount(gm.getByTestId('talk-notice'), 2)
      const notices = (await gm.getByTestId('talk-notice-text').allInnerTexts()).map((t) => t.trim())
      assert.deepEqual(notices, [`${username} joined as The Porter`, `The GM removed ${username} from The Porter's seat`])
      await pictures(gm, 'talk-notices', gm.getByTestId('table-talk'))
    })
  } finally {
    for (const person of people) await person.context.close().catch(() => {})
  }
})
