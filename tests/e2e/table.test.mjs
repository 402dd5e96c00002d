/**
 * The table as its people feel it (issue 25, "Tests"), in several browsers against one server:
 * a GM, two players (Alice, Bob), a spectator, and Tony, an AI character.
 *
 * - Alerts: Alice's tab hidden, an outcome raises the tab title's unread count beside the
 *   frame's name and (alerts on, notifications granted) makes a browser notification; the
 *   title is plain again once she looks; "Waiting for … to commit" names who has not.
 * - Settings change live: the GM renames the frame and changes its tempo; the players' pages
 *   show the new name (and a draft's window its new length) without a reload.
 * - An AI seat answers when addressed: Alice asks Tony something; Tony is seen "thinking" and
 *   his own action reaches Alice's and the GM's pages, the GM pressing nothing. Left to the
 *   GM ("only when I say"), he does not act on his own.
 * - The GM's voice: a narration reaches both players and the spectator; a private note only
 *   its seat's player (not the other player, not the spectator, not on their sockets).
 * - Export per role: Alice's download holds her story and no one else's; the GM's every seat's.
 * - The GM reads any seat's character sheet from its row, on a phone too; sheets are read once.
 *
 * Set-up (cast, production, frame, seats) goes through the REST API (frame_setup.mjs); what
 * is tested goes through the pages.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import {
  commit,
  createCast,
  expectSteady,
  joinSeat,
  mark,
  narrativeDone,
  openBrowser,
  outcomeWith,
  recordSocket,
  shootingStep,
  startFrame,
  writeIntention,
} from './frame_setup.mjs'
import { api, e2e, eventually, expectCount, expectHidden, expectText, expectVisible, signUp, unique, useLmix } from './harness.mjs'

// Tony's assistant runs on the fake LLM server, which thinks 1.5 s before each answer: long
// enough for every page to show him "thinking" (the offline narrator answers at once).
const lmix = useLmix({ fakeLLM: { delay: 1.5 } })

const TONY = 'Tony Rosetti'

// --- in-page recording ------------------------------------------------------------------------

/**
 * Installed before the page's scripts: records, from a MutationObserver, every seat shown
 * "thinking" (the player's table and the GM's seat rows) and every "Waiting for…" line, so
 * nothing brief is missed.
 */
function tableRecorder() {
  const rec = (window.__table = { thinking: [], waiting: [] })
  const sample = () => {
    for (const el of document.querySelectorAll('[data-testid="seat-typing"], [data-testid="gm-seat-typing"]')) {
      const seat = el.closest('[data-seat-id]')?.getAttribute('data-seat-id')
      if (seat && /thinking/.test(el.textContent ?? '') && !rec.thinking.includes(seat)) rec.thinking.push(seat)
    }
    for (const el of document.querySelectorAll('[data-testid="waiting-for"]')) {
      const text = (el.textContent ?? '').trim()
      if (rec.waiting[rec.waiting.length - 1] !== text) rec.waiting.push(text)
    }
  }
  new MutationObserver(sample).observe(document, { subtree: true, childList: true, characterData: true, attributes: true })
}
const recordedTable = (page) => page.evaluate(() => window.__table ?? { thinking: [], waiting: [] })

/**
 * Installed before the page's scripts: a Notification that records what the page shows
 * (Chromium shows nothing headless) and answers with the context's real permission.
 */
function notificationRecorder() {
  const Real = window.Notification
  const shown = (window.__notifications = [])
  class RecordedNotification {
    static get permission() {
      return Real ? Real.permission : 'default'
    }
    static requestPermission() {
      return Real ? Real.requestPermission() : Promise.resolve('denied')
    }
    constructor(title, options = {}) {
      shown.push({ title, body: options.body ?? '', tag: options.tag ?? '' })
    }
    close() {}
  }
  window.Notification = RecordedNotification
}

/** Pretend the tab is hidden (another tab in front) or shown again, as the browser tells it. */
const setVisible = (page, visible) =>
  page.evaluate((visible) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (visible ? 'visible' : 'hidden') })
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => !visible })
    document.dispatchEvent(new Event('visibilitychange'))
  }, visible)

/** Count the page's requests whose URL matches `pattern`, from now on. */
function countRequests(page, pattern) {
  const seen = []
  page.on('request', (r) => {
    if (pattern.test(r.url())) seen.push(`${r.method()} ${r.url()}`)
  })
  return seen
}

/** The seconds a draft's verdict says its window will last ("window 23 s" → 23). */
const windowSeconds = async (card) => Number(/(\d+) s/.exec(await card.getByTestId('verdict-window').innerText())?.[1])

/** An outcome entry whose (first) action is `name`'s. */
const actionBy = (page, name) => page.getByTestId('feed-outcome').filter({ has: page.getByTestId('outcome-action-text').filter({ hasText: new RegExp(`^\\s*${name}`) }) })

// --- the table ----------------------------------------------------------------------------------

e2e(
  lmix,
  'table: alerts, live settings, an AI character that answers when addressed, the GM’s voice, exports per role, the GM’s sheets',
  async ({ page: gm, context, suite, step: harnessStep }) => {
    const people = { alice: null, bob: null, spectator: null }
    const step = shootingStep(suite, harnessStep, people)
    const cast = [{ name: 'Alice Thompson' }, { name: 'Bob Marsh', fields: { internal_truth: mark('BOBSECRET') } }, { name: TONY }]
    const [alice, bob, tony] = cast
    const bobSecret = bob.fields.internal_truth
    let frameId
    let name = unique('Harbour table')
    const sheetReads = {}
    const sent = {} // what one step leaves for the next
    const gmAdvances = countRequests(gm, /\/advance\/?$/)

    try {
      await context.addInitScript(tableRecorder) // the GM's page: from its next load on
      await signUp(gm)
      const ready = await step('the GM starts a frame (Alice and Bob open, Tony an AI) and lets spectators in; everyone opens their page', async () => {
        tony.model = (
          await api(gm, 'POST', '/api/models', { name: unique('Thoughtful'), provider: 'openai_compatible', api_endpoint: suite.fakeLLMURL, model_id: 'fake-gpt' })
        ).id
        const { production, offline } = await createCast(gm, cast)
        // Tempo 1: windows long enough to read a "Waiting for…" line; the GM fires them. The
        // offline narrator tells every scene (Tony's model only decides what he does).
        const view = await startFrame(gm, production, cast, {
          name,
          tempo: 1,
          liquid_visibility: 'all',
          open_seats: [alice.persona, bob.persona],
          medium_model: offline.id,
        })
        frameId = view.id
        assert.equal(view.seats.find((s) => s.id === tony.seat).ai_reacts, 'addressed')
        await gm.goto(`/frames/${frameId}/gm`)
        await expectVisible(gm.locator('[data-testid="connection-status"][data-status="open"]'))
        await gm.getByTestId('spectators-allow').click()
        await expectVisible(gm.getByTestId('spectators-stop'))
        const { spectator_code: code } = await api(gm, 'GET', `/api/frames/${frameId}`)
        assert.ok(code, 'no spectator link')

        for (const [key, member] of [
          ['alice', alice],
          ['bob', bob],
        ]) {
          const person = (people[key] = await openBrowser(suite, {
            init: key === 'alice' ? [tableRecorder, notificationRecorder] : [tableRecorder],
            permissions: key === 'alice' ? ['notifications'] : [],
          }))
          sheetReads[key] = countRequests(person.page, /\/sheet\/?$/)
          await signUp(person.page)
          await joinSeat(person.page, view.invite_code, member.seat)
          await person.page.goto(`/frames/${frameId}`)
          await expectText(person.page.getByTestId('my-character'), member.name)
          await expectVisible(person.page.locator('[data-testid="connection-status"][data-status="open"]'))
        }
        const watcher = (people.spectator = await openBrowser(suite))
        watcher.spectateFrames = recordSocket(watcher.page, { url: '/ws/spectate/' })
        await signUp(watcher.page)
        await watcher.page.goto(`/watch/${encodeURIComponent(code)}`)
        await expectText(watcher.page.getByTestId('spectate-name'), name)
        await expectVisible(watcher.page.getByTestId('spectate-feed'))
        await expectText(watcher.page.getByTestId('spectate-connection'), /live/i)
      })
      if (!ready) return

      await step('alerts: with her tab hidden, an outcome raises Alice’s title count and a notification; the waiting line names who has not committed', async () => {
        const a = people.alice.page
        const b = people.bob.page
        await eventually(async () => assert.equal(await a.title(), `${name} · LMiX`))
        await a.getByTestId('alerts-toggle').click()
        await expectText(a.getByTestId('alerts-toggle'), 'Alerts on')
        await setVisible(a, false)

        const marker = mark('BOB1')
        // More than a dozen words: a long window (−1), which the GM fires once the lines are read.
        const card = await writeIntention(b, `He leans across the table and quietly asks the innkeeper about the ships that came in last night, ${marker}.`)
        await commit(b, card)
        await expectText(b.getByTestId('waiting-for'), `Waiting for ${alice.name} to commit`)
        await expectText(a.getByTestId('waiting-for'), 'Waiting for you to commit')
        assert.equal(await a.title(), `${name} · LMiX`, 'a window of someone else’s counted as news')

        const gmWindow = gm.getByTestId('gm-window').filter({ hasText: bob.name })
        await gmWindow.getByTestId('gm-window-fire').click()
        await outcomeWith(a, marker)
        await eventually(async () => assert.equal(await a.title(), `(1) ${name} · LMiX`), { message: 'the hidden tab’s title did not count the outcome' })
        await eventually(async () => {
          const shown = await a.evaluate(() => window.__notifications)
          assert.deepEqual(
            shown.map((n) => n.body),
            [`${name}: something happened.`],
          )
        })
        await expectHidden(a.getByTestId('waiting-for'))

        await setVisible(a, true)
        await eventually(async () => assert.equal(await a.title(), `${name} · LMiX`), { message: 'the title kept its count once Alice looked' })
        // Bob looked all along: nothing counted in his title, no line left waiting.
        assert.equal(await b.title(), `${name} · LMiX`)
        await expectHidden(b.getByTestId('waiting-for'))
        await narrativeDone(b, bob.seat, marker)
      })

      await step('settings change live: the GM renames the frame and sets tempo 0.4; the players’ pages follow without a reload', async () => {
        const a = people.alice.page
        const b = people.bob.page
        for (const p of [a, b]) await p.evaluate(() => (window.__samePage = true))
        const draft = await writeIntention(b, `He counts his coins, ${mark('BOB2')}.`)
        const before = await windowSeconds(draft)

        name = unique('Renamed table')
        await gm.getByTestId('settings-toggle').click()
        const form = gm.getByTestId('settings-form')
        await form.getByTestId('settings-name').fill(name)
        await form.getByTestId('settings-tempo').fill('0.4')
        await form.getByTestId('settings-save').click()
        await expectText(gm.getByTestId('frame-name'), name)
        await expectVisible(gm.getByText('tempo ×0.4'))

        for (const p of [a, b]) {
          await expectText(p.getByTestId('frame-name'), name)
          await eventually(async () => assert.equal(await p.title(), `${name} · LMiX`))
          assert.equal(await p.evaluate(() => window.__samePage), true, 'the page was reloaded')
        }
        await eventually(async () => {
          const after = await windowSeconds(draft)
          assert.ok(after < before, `the draft's window says ${after} s at tempo 0.4, ${before} s at tempo 1`)
        })
        await draft.getByTestId('liquid-withdraw').click()
        await expectCount(draft, 0)
      })

      const answered = await step('an AI seat answers when addressed: Alice asks Tony; he thinks, then acts on both pages, the GM pressing nothing', async () => {
        const a = people.alice.page
        const heard = people.alice.frames.length
        const marker = mark('ASK1')
        await commit(a, await writeIntention(a, `She asks Tony whether he has been here before, ${marker}.`))
        await outcomeWith(a, marker)
        const onAlice = actionBy(a, TONY)
        const onGm = actionBy(gm, TONY)
        await expectVisible(onAlice, { timeout: 60_000 })
        await expectVisible(onGm, { timeout: 45_000 })
        const id = await onAlice.first().getAttribute('data-outcome-id')
        assert.equal(await onGm.first().getAttribute('data-outcome-id'), id, 'Alice and the GM read different outcomes of Tony’s')
        // He was seen thinking meanwhile, on the GM's seat row and at Alice's table.
        assert.ok((await recordedTable(gm)).thinking.includes(tony.seat), 'the GM never saw Tony thinking')
        assert.ok((await recordedTable(a)).thinking.includes(tony.seat), 'Alice never saw Tony thinking')
        const said = people.alice.frames.slice(heard).filter((f) => f.msg?.type === 'presence' && f.msg.seat === tony.seat && 'typing' in f.msg)
        assert.deepEqual(said.map((f) => f.msg.typing), [true, false], 'Tony’s thinking was not said begun and over')
        assert.deepEqual(gmAdvances, [], 'the GM’s page asked the AI to act')
      })

      await step('left to the GM ("only when I say"), Tony does not act on his own when addressed', async () => {
        const a = people.alice.page
        const row = gm.locator(`[data-testid="gm-seat"][data-seat-id="${tony.seat}"]`)
        await row.getByTestId('gm-seat-reacts').selectOption('gm')
        await eventually(async () => {
          const view = await api(gm, 'GET', `/api/frames/${frameId}`)
          assert.equal(view.seats.find((s) => s.id === tony.seat).ai_reacts, 'gm')
        })
        const tonyOutcomes = async () => (await api(gm, 'GET', `/api/frames/${frameId}`)).outcomes.filter((o) => o.seat === tony.seat).length
        const held = await tonyOutcomes()
        assert.ok(!answered || held >= 1, 'Tony had acted before')
        const heard = people.alice.frames.length

        const marker = mark('ASK2')
        await commit(a, await writeIntention(a, `She asks Tony Rosetti about the harbour lights, ${marker}.`))
        await outcomeWith(a, marker)
        await narrativeDone(a, alice.seat, marker)
        // The pass that would have sent him is over; give a queued task time to show itself.
        await expectSteady(tonyOutcomes, 6000, 'the number of Tony’s outcomes')
        const thinking = people.alice.frames
          .slice(heard)
          .filter((f) => f.msg?.type === 'presence' && f.msg.seat === tony.seat && f.msg.typing)
        assert.deepEqual(thinking, [], 'Tony was thinking although left to the GM')
        assert.deepEqual(gmAdvances, [])
      })

      await step('the GM’s voice: a narration reaches every page; a private note only its seat’s player', async () => {
        const a = people.alice.page
        const b = people.bob.page
        const s = people.spectator.page
        const notes = { bob: mark('NOTEBOB'), alice: mark('NOTEALICE') }
        const narration = mark('NARRATION')
        const voice = gm.getByTestId('gm-voice')
        const speak = async (to, text) => {
          await voice.getByTestId('gm-voice-to').selectOption({ value: to })
          await voice.getByTestId('gm-voice-text').fill(text)
          await voice.getByTestId('gm-voice-send').click()
          await eventually(async () => assert.equal(await voice.getByTestId('gm-voice-text').inputValue(), ''), { message: 'the server did not take the GM’s words' })
        }
        // The notes first: once the narration (after them) reached a page, a note sent there would have too.
        await speak(bob.seat, `The innkeeper slips you a folded letter: ${notes.bob}.`)
        await speak(alice.seat, `You notice a stain on the map: ${notes.alice}.`)
        await speak('', `A foghorn sounds across the whole harbour, ${narration}.`)

        for (const p of [a, b, s]) {
          const told = p.getByTestId('feed-outcome').filter({ hasText: narration })
          await expectVisible(told)
          await expectVisible(told.getByTestId('outcome-gm'))
        }
        for (const [p, seat, own] of [
          [b, bob.seat, notes.bob],
          [a, alice.seat, notes.alice],
        ]) {
          const note = p.locator(`[data-testid="feed-narrative"][data-seat="${seat}"]`).filter({ hasText: own })
          await expectVisible(note)
          await expectText(note.getByTestId('narrative-label'), /a note from the gm/i)
        }
        const absent = async (p, frames, marker, who) => {
          assert.ok(!(await p.content()).includes(marker), `${who}'s page holds ${marker}`)
          assert.deepEqual(frames.filter((f) => f.raw.includes(marker)).map((f) => f.raw.slice(0, 200)), [], `${who}'s socket carried ${marker}`)
        }
        await absent(a, people.alice.frames, notes.bob, 'Alice')
        await absent(b, people.bob.frames, notes.alice, 'Bob')
        for (const marker of [notes.bob, notes.alice]) await absent(s, people.spectator.spectateFrames, marker, 'the spectator')
        // The GM reads both, as notes of theirs.
        for (const marker of [notes.bob, notes.alice]) await expectVisible(gm.getByTestId('feed-narrative').filter({ hasText: marker }))
        sent.notes = notes
      })

      await step('export per role: Alice’s download holds her story only, the GM’s every seat’s', async () => {
        const a = people.alice.page
        const { notes } = sent
        assert.ok(notes, 'the notes step did not run')
        const download = async (p, format) => {
          const href = await p.getByTestId('story-recap').getByTestId(`export-${format}`).getAttribute('href')
          const res = await p.request.get(href)
          assert.equal(res.status(), 200, `${href} answered ${res.status()}`)
          assert.match(res.headers()['content-disposition'], new RegExp(`^attachment; filename=".+\\.${format}"$`))
          return res.text()
        }
        const gmView = await api(gm, 'GET', `/api/frames/${frameId}`)
        const bobStories = gmView.narratives.filter((n) => n.seat === bob.seat).map((n) => n.id)
        const aliceStories = gmView.narratives.filter((n) => n.seat === alice.seat).map((n) => n.id)
        assert.ok(bobStories.length >= 2 && aliceStories.length >= 2, `stories: ${JSON.stringify({ bobStories, aliceStories })}`)

        const aliceMd = await download(a, 'md')
        const aliceJson = JSON.parse(await download(a, 'json'))
        assert.ok(aliceMd.includes(notes.alice), 'Alice’s Markdown lacks her note')
        for (const secret of [notes.bob, bobSecret]) {
          assert.ok(!aliceMd.includes(secret), `Alice’s Markdown holds ${secret}`)
          assert.ok(!JSON.stringify(aliceJson).includes(secret), `Alice’s JSON holds ${secret}`)
        }
        assert.equal(aliceJson.reader, 'player')
        const held = aliceJson.narratives.map((n) => n.id)
        assert.deepEqual(held.filter((id) => bobStories.includes(id)), [], 'Alice’s export holds a story of Bob’s')
        for (const id of aliceStories) assert.ok(held.includes(id), `Alice’s export lacks her story ${id}`)
        assert.ok(aliceJson.narratives.every((n) => n.seat === alice.seat || n.shared), 'Alice’s export holds another seat’s narrative')

        const gmMd = await download(gm, 'md')
        const gmJson = JSON.parse(await download(gm, 'json'))
        assert.equal(gmJson.reader, 'gm')
        for (const note of [notes.alice, notes.bob]) assert.ok(gmMd.includes(note), `the GM’s Markdown lacks ${note}`)
        const all = gmJson.narratives.map((n) => n.id)
        for (const id of [...aliceStories, ...bobStories]) assert.ok(all.includes(id), `the GM’s export lacks the story ${id}`)
      })

      await step('the GM opens each seat’s character sheet from its row (read once), on a phone too; each player’s sheet was read once', async () => {
        const gmSheets = countRequests(gm, /\/sheet\/?$/)
        const open = async (member) => {
          await gm.locator(`[data-testid="gm-seat"][data-seat-id="${member.seat}"]`).getByTestId('gm-seat-sheet').click()
          const dialog = gm.getByTestId('gm-sheet-dialog')
          await expectVisible(dialog)
          await expectText(dialog.getByTestId('sheet-me'), member.name)
          return dialog
        }
        let dialog = await open(bob)
        await expectText(dialog.getByTestId('sheet-me-secret'), bobSecret)
        await dialog.getByTestId('modal-close').click()
        await expectHidden(dialog)
        dialog = await open(bob)
        await expectText(dialog.getByTestId('sheet-me-secret'), bobSecret)
        await dialog.getByTestId('modal-close').click()
        assert.equal(gmSheets.length, 1, `Bob's sheet was read ${gmSheets.length} times: ${gmSheets.join(', ')}`)

        await gm.setViewportSize({ width: 390, height: 844 })
        dialog = await open(tony)
        await expectText(dialog.getByTestId('sheet-me-secret'), `${TONY} hides a stolen map.`)
        const fit = await gm.evaluate(() => {
          const box = document.querySelector('[data-testid="gm-sheet-dialog"]').getBoundingClientRect()
          return { left: box.left, right: box.right, scrollWidth: document.documentElement.scrollWidth }
        })
        assert.ok(fit.left >= 0 && fit.right <= 390 && fit.scrollWidth <= 390, `the sheet dialog does not fit 390 px: ${JSON.stringify(fit)}`)
        // With LMIX_SCREENSHOTS set to a folder (as frames.test.mjs), a picture of it.
        if (process.env.LMIX_SCREENSHOTS) await gm.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'gm-sheet-phone.png') })
        await dialog.getByTestId('modal-close').click()
        await gm.setViewportSize({ width: 1366, height: 900 })

        // Through seat changes, outcomes and notes, each player's page read its sheet once.
        for (const key of ['alice', 'bob']) assert.equal(sheetReads[key].length, 1, `${key}'s page read the sheet ${sheetReads[key].length} times`)
      })
    } finally {
      for (const person of [people.alice, people.bob, people.spectator]) await person?.context.close().catch(() => {})
    }
  },
  { timeout: 420_000 },
)
