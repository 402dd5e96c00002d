/**
 * Frames: live multiplayer play in several browsers against one server (issue 8, "Tests").
 *
 * "the GM creates a frame and copies the invite; two players join from their own browsers,
 * take seats, write, see the soft verdict, commit, watch the countdown, and receive the same
 * outcome; each sees only their own narrative stream; the GM page shows both. An interrupt
 * ends a window early and both pages say why. A player reloads mid-narrative and the text
 * continues without loss or duplication. The GM pauses (countdowns freeze), resumes, retries
 * a failed pass (a model pointed at a closed port), and kicks a seat (that browser stops
 * receiving). The player page at 390 × 844 has no horizontal scroll."
 *
 * Set-up (world, scenario, personas, assistants on the offline narrator, the production)
 * goes through the REST API; the frame, the invite, the seats and the play through the UI.
 *
 * What is private here: the flesh. Outcomes (the bones: who did what) are shared with the
 * whole table by design, and the offline narrator's bones repeat each action as written, so
 * a player's marker does reach the other players — inside the outcome feed and nowhere else.
 * The checks say exactly that: the other's marker appears only in outcome entries (of the page
 * and of the socket's `outcome.created` events), and the other's narrative — its id, its
 * stream, its text — never reaches the page or the socket.
 *
 * Windows are short: tempo 0.4 makes a −2 intention (a dozen words or fewer) a 3 s window and
 * a −1 one (more words) 9 s. The narrator streams one delta per 0.2 s (below), so a
 * narrative takes a few seconds and a reload can land in the middle of one.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import {
  api,
  e2e,
  eventually,
  expectCount,
  expectPath,
  expectText,
  expectVisible,
  signUp,
  unique,
  useLmix,
} from './harness.mjs'
import {
  commit,
  createCast,
  expectSteady,
  mark,
  myLiquidCard,
  narrativeDone,
  openBrowser as openBrowserOf,
  outcomeWith,
  recordSocket,
  shootingStep,
  writeIntention,
} from './frame_setup.mjs'

// The harness hands this to the server it starts (in `before`): slow enough to reload in
// the middle of a narrative, fast enough for the whole file to take a couple of minutes.
process.env.LMIX_OFFLINE_STREAM_DELAY = process.env.FRAMES_E2E_STREAM_DELAY ?? '0.2'

const lmix = useLmix()

const TEMPO = '0.4'
const CAST = [
  { key: 'alice', name: 'Alice Thompson' },
  { key: 'bob', name: 'Bob Marsh' },
  { key: 'carol', name: 'Carol Vance' }, // played by AI
]

// --- in-page recording ------------------------------------------------------------------------

/**
 * Installed in every page of a context before its scripts run (so it survives a reload):
 * records every text the composer's countdown shows, every state of every narrative
 * (status and text) and every banner (notice), from a MutationObserver, so nothing fast is missed.
 */
function recorder() {
  const rec = (window.__rec = { countdowns: [], narratives: {}, notices: [], shown: new Set() })
  const sample = () => {
    // Each banner as it appears (again, when it comes back).
    const shown = new Set()
    for (const el of document.querySelectorAll('[data-testid^="notice-"]')) {
      const entry = { key: el.getAttribute('data-testid').slice('notice-'.length), text: (el.textContent ?? '').trim() }
      const id = `${entry.key}|${entry.text}`
      if (!rec.shown.has(id)) rec.notices.push(entry)
      shown.add(id)
    }
    rec.shown = shown
    for (const el of document.querySelectorAll('[data-testid="composer"] [data-testid="window-countdown"]')) {
      const text = (el.textContent ?? '').trim()
      if (rec.countdowns[rec.countdowns.length - 1] !== text) rec.countdowns.push(text)
    }
    for (const el of document.querySelectorAll('[data-testid="feed-narrative"]')) {
      const id = el.getAttribute('data-narrative-id')
      const status = el.getAttribute('data-status')
      const text = el.querySelector('[data-testid="narrative-text"]')?.textContent ?? ''
      const list = (rec.narratives[id] ??= [])
      const last = list[list.length - 1]
      if (!last || last.status !== status || last.text !== text) list.push({ status, text })
    }
  }
  new MutationObserver(sample).observe(document, { subtree: true, childList: true, characterData: true, attributes: true })
}

const recorded = (page) => page.evaluate(() => ({ ...(window.__rec ?? { countdowns: [], narratives: {}, notices: [] }), shown: undefined }))

/** Make a context's pages record (countdowns, narratives); the page's socket frames too. */
async function instrument(context, page) {
  await context.addInitScript(recorder)
  return recordSocket(page, { url: '/ws/frames/' })
}

/** Another person's browser, its pages recording (frame_setup.mjs `openBrowser`). */
const openBrowser = (suite, options = {}) => openBrowserOf(suite, { ...options, init: [recorder] })

// --- page helpers -------------------------------------------------------------------------------

/**
 * With LMIX_SCREENSHOTS set to a folder (`make screenshots`: docs/screenshots), the pages a
 * newcomer sees first in the README, on a desktop and on a phone, as the scene stands.
 */
async function pictures(pages, frameId) {
  const dir = process.env.LMIX_SCREENSHOTS
  if (!dir) return
  fs.mkdirSync(dir, { recursive: true })
  // A word at the table, so the pictures show table talk too.
  await api(pages.gm, 'POST', `/api/frames/${frameId}/talk`, { text: 'Take your time, everyone.' })
  await api(pages.player, 'POST', `/api/frames/${frameId}/talk`, { text: 'Back in five, keep my seat warm.' })
  await expectCount(pages.player.getByTestId('talk-message'), 2)
  for (const [name, page] of Object.entries(pages)) {
    const viewport = page.viewportSize()
    for (const [device, size] of [
      ['desktop', { width: 1366, height: 900 }],
      ['phone', { width: 390, height: 844 }],
    ]) {
      await page.setViewportSize(size)
      await page.waitForTimeout(300) // the layout settles after a resize (a picture, not a test)
      await page.screenshot({ path: path.join(dir, `${name}-${device}.png`) })
    }
    await page.setViewportSize(viewport)
  }
}

/** Seconds shown by a countdown's text ("3 s" → 3), or null ("writing the scene…"). */
const seconds = (text) => {
  const m = /(\d+) s\b/.exec(text ?? '')
  return m ? Number(m[1]) : null
}

/** A narrative's words without its Markdown: the page renders `*actions*` in italics, so
 *  an asterisk shows while its action streams and goes once it closes; paragraphs and line
 *  breaks become elements. What streams must still only ever grow by these. */
const words = (text) => text.replace(/[*_\s]/g, '')

/** Assert the narrative was watched growing by appending, ending in `finalText`. */
function assertStreamed(samples, finalText, what) {
  const live = samples.filter((s) => s.status === 'streaming' && s.text)
  const summary = JSON.stringify(samples.map((s) => [s.status, s.text.length]))
  assert.ok(new Set(live.map((s) => s.text.length)).size >= 2, `${what}: not watched streaming; samples [status, length]: ${summary}`)
  for (let i = 1; i < live.length; i++) assert.ok(words(live[i].text).startsWith(words(live[i - 1].text)), `${what}: grew by other than appending: ${summary}`)
  for (const s of live) assert.ok(words(finalText).startsWith(words(s.text)), `${what}: a streamed state is not a prefix of the final text: ${summary}`)
}

/** The page's HTML without its outcome entries (the bones everyone shares). */
const htmlWithoutOutcomes = (page) =>
  page.evaluate(() => {
    const root = document.documentElement.cloneNode(true)
    // The shared outcomes, and the character's own memories of them (the state pass keeps
    // a witnessed outcome's public words): what everyone at the table read.
    for (const el of root.querySelectorAll('[data-testid="feed-outcome"], [data-testid="state-memory"]')) el.remove()
    return root.outerHTML
  })

/** Sentences of a prose (for "nothing said twice"). */
const sentences = (text) => text.match(/[^.!?…]+[.!?…]+["”’]?/g)?.map((s) => s.trim()).filter(Boolean) ?? [text]

const countdownText = (locator) => locator.first().innerText({ timeout: 2000 }).then((t) => t.trim())

// --- the table: a GM, two players, one AI -----------------------------------------------------

e2e(
  lmix,
  'frames: a GM and two players in their own browsers — invite, seats, verdicts, countdowns, shared outcomes, private stories, reload, pause, interrupt, cancel, kick',
  async ({ page: gm, context, suite, step: harnessStep }) => {
    const people = { alice: null, bob: null }
    const step = shootingStep(suite, harnessStep, people)
    const gmFrames = await instrument(context, gm)
    const cast = CAST.map((c) => ({ ...c }))
    const [alice, bob, carol] = cast
    let frameId
    let inviteUrl
    const marks = { alice: mark('ALICE'), bob: mark('BOB') }
    const seen = {} // what step 3 found, for the later steps

    try {
      await signUp(gm)

      const started = await step('the GM starts a frame from the production page, two seats open, and reads the invite link', async () => {
        const { production } = await createCast(gm, cast)
        await gm.goto(`/productions/${production.id}`)
        await gm.getByTestId('production-frames').click()
        await expectPath(gm, '/frames')
        assert.equal(new URL(gm.url()).searchParams.get('production'), production.id)
        await expectVisible(gm.getByTestId('frames-empty'))
        await gm.getByTestId('frame-new').click()
        const modal = gm.getByTestId('frame-modal')
        await expectVisible(modal)
        await expectCount(modal.getByTestId('seat-option'), 3)
        const name = unique('Live harbour')
        await modal.getByTestId('field-name').fill(name)
        await modal.getByTestId('field-tempo').fill(TEMPO)
        await modal.getByTestId('field-liquid_visibility').selectOption('own')
        await modal.getByTestId(`seat-open-${carol.assistant}`).uncheck()
        await expectText(modal.getByTestId('field-seats'), '2 for players, 1 played by AI')
        await modal.getByTestId('form-save').click()

        await expectPath(gm, /^\/frames\/[0-9a-f-]{36}\/gm$/)
        frameId = gm.url().split('/frames/')[1].split('/')[0]
        await expectText(gm.getByTestId('frame-name'), name)
        await expectVisible(gm.locator('[data-testid="connection-status"][data-status="open"]'))
        await expectCount(gm.getByTestId('gm-seat'), 3)
        await expectCount(gm.locator('[data-testid="gm-seat"][data-controller="open"]'), 2)
        await expectCount(gm.locator('[data-testid="gm-seat"][data-controller="ai"]'), 1)
        const view = await api(gm, 'GET', `/api/frames/${frameId}`)
        assert.equal(view.tempo, Number(TEMPO))
        assert.equal(view.liquid_visibility, 'own')
        for (const member of cast) member.seat = view.seats.find((s) => s.persona === member.persona)?.id
        assert.ok(cast.every((m) => m.seat), `seats not found by persona: ${JSON.stringify(view.seats)}`)

        inviteUrl = await gm.getByTestId('invite-input').inputValue()
        assert.match(inviteUrl, new RegExp(`^${lmix.baseURL}/join/[^/]+$`))
        assert.ok(inviteUrl.endsWith(`/join/${encodeURIComponent(view.invite_code)}`), `${inviteUrl} is not the frame's invite`)
      })
      if (!started) return

      const joined = await step('two players sign up in their own browsers, open the invite link and take a seat each', async () => {
        for (const [key, member] of [
          ['alice', alice],
          ['bob', bob],
        ]) {
          const person = (people[key] = await openBrowser(suite))
          person.user = await signUp(person.page)
          await person.page.goto(inviteUrl)
          await expectVisible(person.page.getByTestId('join-seats'))
          const seatCard = person.page.locator(`[data-testid="join-seat"][data-seat-id="${member.seat}"]`)
          await expectText(seatCard.getByTestId('join-seat-role'), 'open')
          // Carol is the AI's; Bob sees Alice's seat taken, by her.
          await expectText(person.page.locator(`[data-testid="join-seat"][data-seat-id="${carol.seat}"]`).getByTestId('join-seat-role'), 'AI')
          if (key === 'bob') {
            await expectText(
              person.page.locator(`[data-testid="join-seat"][data-seat-id="${alice.seat}"]`).getByTestId('join-seat-role'),
              `played by ${people.alice.user.username}`,
            )
          }
          await seatCard.getByTestId('join-take').click()
          await expectPath(person.page, `/frames/${frameId}`)
          await expectText(person.page.getByTestId('my-character'), member.name)
          await expectVisible(person.page.locator('[data-testid="connection-status"][data-status="open"]'))
          await expectVisible(person.page.getByTestId('feed-empty'))
          await expectText(gm.locator(`[data-testid="gm-seat"][data-seat-id="${member.seat}"]`), `played by ${person.user.username}`)
        }
        // Each sees the other at the table, here now.
        for (const [key, other] of [
          ['alice', bob],
          ['bob', alice],
        ]) {
          const item = people[key].page.locator(`[data-testid="seat-item"][data-seat-id="${other.seat}"]`)
          await expectVisible(item.locator('[data-testid="seat-online"][data-online="true"]'))
        }
      })
      if (!joined) return

      const played = await step('each writes, reads the soft verdict, commits and watches a countdown; both receive the same outcomes', async () => {
        const a = people.alice.page
        const b = people.bob.page
        // Alice: more than a dozen words, no cue → −1 (9 s at tempo 0.4). Bob: a few words → −2 (3 s).
        const aliceText = `She spreads the faded chart across the table and traces the northern coastline with one finger, murmuring ${marks.alice}.`
        const bobText = `He orders a hot drink and says ${marks.bob}.`
        const aliceCard = await writeIntention(a, aliceText)
        const bobCard = await writeIntention(b, bobText)
        await expectText(aliceCard.getByTestId('pscale-chip'), '−1')
        await expectText(bobCard.getByTestId('pscale-chip'), '−2')
        // Visibility "own": each sees that the other intends something, not what.
        await expectVisible(a.getByTestId('others-liquid').getByTestId('liquid-hidden'))
        await expectVisible(b.getByTestId('others-liquid').getByTestId('liquid-hidden'))
        // The GM reads both, with their verdicts.
        await expectText(gm.getByTestId('gm-liquid'), marks.alice)
        await expectText(gm.getByTestId('gm-liquid'), marks.bob)

        await commit(a, aliceCard)
        await commit(b, bobCard)
        await expectText(aliceCard.getByTestId('window-countdown'), /\d+ s/)
        await expectVisible(gm.getByTestId('gm-window'))

        const aliceOutcome = await outcomeWith(a, marks.alice)
        const bobOutcome = await outcomeWith(b, marks.bob)
        assert.notEqual(aliceOutcome.id, bobOutcome.id, 'different pscales resolve apart: two outcomes')
        // The same outcomes, word for word, on both pages; the same actions and facts on the GM's.
        const partsOf = (el) => el.locator('[data-testid="outcome-action"], [data-testid="outcome-fact"]').allInnerTexts()
        for (const o of [aliceOutcome, bobOutcome]) {
          const inA = a.locator(`[data-testid="feed-outcome"][data-outcome-id="${o.id}"]`)
          const inB = b.locator(`[data-testid="feed-outcome"][data-outcome-id="${o.id}"]`)
          const inGm = gm.locator(`[data-testid="feed-outcome"][data-outcome-id="${o.id}"]`)
          for (const el of [inA, inB, inGm]) await expectVisible(el, { timeout: 45_000 })
          assert.equal((await inA.innerText()).trim(), (await inB.innerText()).trim(), 'the players read the outcome differently')
          assert.deepEqual(await partsOf(inGm), await partsOf(inA), "the GM's outcome differs from the players'")
        }
        for (const [key, p] of [
          ['alice', a],
          ['bob', b],
        ]) {
          const values = (await recorded(p)).countdowns.map(seconds).filter((s) => s !== null)
          assert.ok(new Set(values).size >= 2, `${key} did not watch the countdown move: ${JSON.stringify((await recorded(p)).countdowns)}`)
          for (let i = 1; i < values.length; i++) assert.ok(values[i] <= values[i - 1], `${key}'s countdown went up: ${JSON.stringify(values)}`)
        }
        seen.outcomes = [aliceOutcome, bobOutcome]
      })
      if (!played) return

      const privately = await step('each reads only their own story, streamed; the GM reads both, marked private', async () => {
        const a = people.alice.page
        const b = people.bob.page
        const aliceStory = await narrativeDone(a, alice.seat, marks.alice)
        const bobStory = await narrativeDone(b, bob.seat, marks.bob)
        seen.stories = { alice: aliceStory, bob: bobStory }
        // (Labels are upper-cased by CSS: innerText reads them so.)
        await expectText(aliceStory.locator.getByTestId('narrative-label'), /your story — only you read this/i)
        await expectText(bobStory.locator.getByTestId('narrative-label'), /your story — only you read this/i)
        assertStreamed((await recorded(a)).narratives[aliceStory.id] ?? [], aliceStory.text, "Alice's story")
        assertStreamed((await recorded(b)).narratives[bobStory.id] ?? [], bobStory.text, "Bob's story")

        // The GM: both, each marked private to its player, the same text.
        for (const [member, story] of [
          [alice, aliceStory],
          [bob, bobStory],
        ]) {
          const el = gm.locator(`[data-testid="feed-narrative"][data-narrative-id="${story.id}"]`)
          await expectText(el.getByTestId('narrative-label'), new RegExp(`private to ${member.name}`, 'i'))
          await eventually(async () => {
            if ((await el.getAttribute('data-status')) !== 'done') throw new Error('not done on the GM page')
          })
          assert.equal((await el.getByTestId('narrative-text').textContent()).trim(), story.text)
        }

        // Nobody else's story reaches a player: not in the page, not on the socket.
        for (const [key, p, own, other, otherMark] of [
          ['alice', a, aliceStory, bobStory, marks.bob],
          ['bob', b, bobStory, aliceStory, marks.alice],
        ]) {
          await expectCount(p.getByTestId('feed-narrative'), 1)
          assert.equal(await p.getByTestId('feed-narrative').getAttribute('data-narrative-id'), own.id)
          const html = await p.content()
          assert.ok(!html.includes(other.id), `${key}'s page holds the other's narrative id`)
          assert.ok(!html.includes(other.text), `${key}'s page holds the other's narrative`)
          assert.ok(!(await p.evaluate(() => document.body.innerText)).includes(other.text), `${key}'s page shows the other's narrative`)
          assert.ok(!(await htmlWithoutOutcomes(p)).includes(otherMark), `${key}'s page shows ${otherMark} outside the shared outcomes`)
          const frames = people[key].frames
          assert.ok(frames.some((f) => f.msg?.type === 'narrative.token' && f.msg.solid === own.id), `${key}'s socket carried no delta of their own story`)
          const leaks = frames.filter((f) => f.raw.includes(other.id) || (f.raw.includes(otherMark) && f.msg?.type !== 'outcome.created'))
          assert.deepEqual(
            leaks.map((f) => f.raw.slice(0, 200)),
            [],
            `${key}'s socket carried the other's story or intention outside an outcome`,
          )
        }
        // And the GM's socket carried both streams.
        for (const story of [aliceStory, bobStory]) {
          assert.ok(gmFrames.some((f) => f.msg?.type === 'narrative.token' && f.msg.solid === story.id), 'the GM did not hear a stream')
        }
      })
      if (!privately) return
      await pictures({ player: people.alice.page, gm }, frameId)

      await step('a player reloads mid-narrative: the text goes on without loss or duplication', async () => {
        const a = people.alice.page
        const marker = mark('ALICE2')
        // About forty words (−1): the narrative streams for several seconds.
        const text =
          'She folds the chart into quarters, slides it inside her coat, and looks slowly around the smoky room ' +
          `at the sailors, the dice players and the tired innkeeper, trying to guess who else has noticed the map, ${marker}.`
        await commit(a, await writeIntention(a, text))
        // Wait for its first words, then reload while the rest is on its way.
        await eventually(
          async () => {
            const current = a.locator('[data-testid="feed-narrative"][data-status="streaming"]')
            if (!(await current.count())) throw new Error('no narrative streaming yet')
            const t = await current.first().getByTestId('narrative-text').textContent({ timeout: 1000 })
            if (!t?.trim()) throw new Error('nothing streamed yet')
          },
          { timeout: 45_000, interval: 50, message: 'the new narrative did not start streaming' },
        )
        const id = await a.locator('[data-testid="feed-narrative"][data-status="streaming"]').first().getAttribute('data-narrative-id')
        const before = (await a.locator(`[data-narrative-id="${id}"]`).getByTestId('narrative-text').textContent()).trim()
        await a.reload()
        await expectPath(a, `/frames/${frameId}`)
        const el = a.locator(`[data-testid="feed-narrative"][data-narrative-id="${id}"]`)
        await expectVisible(el)
        await eventually(
          async () => {
            const status = await el.getAttribute('data-status', { timeout: 1000 })
            if (status === 'failed') throw Object.assign(new Error('the narrative failed'), { fatal: true })
            if (status !== 'done') throw new Error(`status is ${status}`)
          },
          { timeout: 45_000, message: 'the narrative did not finish after the reload' },
        )
        const final = (await el.getByTestId('narrative-text').textContent()).trim()
        const stored = (await api(a, 'GET', `/api/frames/${frameId}`)).narratives.find((n) => n.id === id)
        assert.ok(stored, 'the narrative is not stored')
        assert.equal(stored.status, 'done')
        assert.equal(words(final), words(stored.text), 'the page ends with other text than the stored narrative')
        assert.ok(final.startsWith(before), 'the text streamed before the reload is not the start of the final text')
        assert.ok(final.includes(marker))
        const said = sentences(final)
        assert.equal(new Set(said).size, said.length, `a sentence is told twice: ${JSON.stringify(said)}`)
        // It was still streaming when the page came back (else this proved nothing).
        const after = (await recorded(a)).narratives[id] ?? []
        assert.ok(
          after.some((s) => s.status === 'streaming'),
          `the narrative had finished before the reloaded page showed it (raise FRAMES_E2E_STREAM_DELAY); samples: ${JSON.stringify(after.map((s) => [s.status, s.text.length]))}`,
        )
        for (const s of after) assert.ok(words(final).startsWith(words(s.text)), `after the reload the page showed ${JSON.stringify(s.text)}, not a prefix of the final text`)
        // One narrative of that id, once: nothing doubled in the feed.
        await expectCount(a.locator(`[data-testid="feed-narrative"][data-narrative-id="${id}"]`), 1)
      })

      await step('the GM pauses (the countdown freezes), resumes (it runs again), and fires the window', async () => {
        const b = people.bob.page
        const marker = mark('BOB3')
        // "minutes" → pscale 0: a 36 s window at tempo 0.4, time enough to pause it.
        const card = await writeIntention(b, `He watches the harbour crowd for a few minutes, ${marker}.`)
        await expectText(card.getByTestId('pscale-chip'), '0')
        await commit(b, card)
        const countdown = card.getByTestId('window-countdown')
        await expectText(countdown, /\d+ s/)
        const gmWindow = gm.locator(`[data-testid="gm-window"]`).filter({ hasText: bob.name })
        await expectVisible(gmWindow)

        await gm.getByTestId('gm-pause').click()
        await expectText(gm.getByTestId('frame-status'), 'paused')
        await expectVisible(gm.getByTestId('gm-resume'))
        await expectVisible(b.getByTestId('notice-paused'))
        await expectText(b.getByTestId('frame-status'), 'paused')
        await expectVisible(card.locator('[data-testid="window-countdown"][data-frozen="true"]'))
        await expectVisible(gmWindow.locator('[data-testid="window-countdown"][data-frozen="true"]'))
        // Frozen: the same number for two seconds, on the player's page and the GM's.
        const frozen = await expectSteady(() => countdownText(countdown), 2000, "Bob's countdown while paused")
        assert.ok(seconds(frozen) > 0, `frozen at ${frozen}`)
        const gmFrozen = seconds(await countdownText(gmWindow.getByTestId('window-countdown')))
        assert.ok(Math.abs(gmFrozen - seconds(frozen)) <= 1, `the GM's countdown froze at ${gmFrozen}, the player's at ${frozen}`)
        await expectSteady(() => countdownText(gmWindow.getByTestId('window-countdown')), 1000, "the GM's countdown while paused")

        await gm.getByTestId('gm-resume').click()
        await expectText(gm.getByTestId('frame-status'), 'open')
        await expectCount(b.getByTestId('notice-paused'), 0)
        await expectCount(card.locator('[data-testid="window-countdown"][data-frozen="true"]'), 0)
        await eventually(
          async () => {
            const now = seconds(await countdownText(countdown))
            if (now === null || now >= seconds(frozen)) throw new Error(`still ${now}`)
          },
          { message: 'the countdown did not run again after resume' },
        )

        await gmWindow.getByTestId('gm-window-fire').click()
        await outcomeWith(b, marker)
        await narrativeDone(b, bob.seat, marker)
      })

      await step('an interrupt ends a window early and both pages say why', async () => {
        const a = people.alice.page
        const b = people.bob.page
        const bobMark = mark('BOB5')
        const aliceMark = mark('ALICE5')
        const bobCard = await writeIntention(b, `He watches the harbour crowd for a few minutes, ${bobMark}.`)
        await commit(b, bobCard)
        await expectText(bobCard.getByTestId('window-countdown'), /\d+ s/)
        // "shoves" → pscale −3 (a 1.6 s window), interruptive, acting on the character named.
        const aliceCard = await writeIntention(a, `She shoves ${bob.name} aside, ${aliceMark}.`)
        await expectText(aliceCard.getByTestId('pscale-chip'), '−3')
        await expectText(aliceCard.getByTestId('verdict-interruptive'), `interrupts ${bob.name}`)
        await commit(a, aliceCard)

        const outcome = await outcomeWith(a, aliceMark)
        const inA = a.locator(`[data-testid="feed-outcome"][data-outcome-id="${outcome.id}"]`)
        const inB = b.locator(`[data-testid="feed-outcome"][data-outcome-id="${outcome.id}"]`)
        await expectText(inA.getByTestId('outcome-interrupt'), `${bob.name} is interrupted: ${alice.name}: She shoves ${bob.name} aside, ${aliceMark}`)
        await expectText(inB.getByTestId('outcome-interrupt'), `You are interrupted: ${alice.name}: She shoves ${bob.name} aside, ${aliceMark}`)
        // Bob was told at once that his window ended early, and why (until his story arrives).
        await eventually(
          async () => {
            const notices = (await recorded(b)).notices
            if (!notices.some((n) => n.key === 'interrupted' && n.text.includes('ended early') && n.text.includes(aliceMark))) {
              throw new Error(`notices seen: ${JSON.stringify(notices)}`)
            }
          },
          { message: "Bob's page never said why his window ended early" },
        )
        const story = await narrativeDone(b, bob.seat, bobMark)
        assert.ok(story.text.includes(aliceMark), `Bob's story does not tell the interruption: ${story.text}`)
        await expectCount(b.getByTestId('notice-interrupted'), 0)
        await expectCount(a.getByTestId('notice-interrupted'), 0)
        await narrativeDone(a, alice.seat, aliceMark)
      })

      await step('the GM cancels a window: the intention goes back to its player, and nobody is told of an interrupt', async () => {
        const b = people.bob.page
        const marker = mark('BOB6')
        const card = await writeIntention(b, `He watches the harbour crowd for a few minutes, ${marker}.`)
        await commit(b, card)
        await expectText(card.getByTestId('window-countdown'), /\d+ s/)
        const noticesBefore = (await recorded(b)).notices.length
        const gmWindow = gm.getByTestId('gm-window').filter({ hasText: bob.name })
        await expectVisible(gmWindow.locator('[data-testid="window-countdown"][data-window-status="open"]'))
        await gmWindow.getByTestId('gm-window-cancel').click()
        await expectCount(gm.getByTestId('gm-window').filter({ hasText: bob.name }), 0)
        await eventually(
          async () => {
            const status = await card.getAttribute('data-status', { timeout: 1000 })
            if (status !== 'submitted') throw new Error(`status is ${status}`)
          },
          { message: 'the cancelled intention did not come back to its player as submitted' },
        )
        await expectVisible(card.getByTestId('liquid-commit'))
        await expectCount(card.getByTestId('window-countdown'), 0)
        const told = (await recorded(b)).notices.slice(noticesBefore).filter((n) => n.key === 'interrupted')
        assert.deepEqual(told, [], 'a GM cancel is told to the player as an interrupt')
        await expectCount(b.getByTestId('notice-interrupted'), 0)
        // Withdraw it: nothing of it stays.
        await card.getByTestId('liquid-withdraw').click()
        await expectCount(myLiquidCard(b, marker), 0)
      })

      await step('the GM kicks a player: their page says so and receives nothing more', async () => {
        const b = people.bob.page
        const a = people.alice.page
        const seatRow = gm.locator(`[data-testid="gm-seat"][data-seat-id="${bob.seat}"]`)
        await seatRow.getByTestId('gm-seat-kick').click()
        const dialog = gm.getByTestId('confirm-dialog')
        await expectVisible(dialog)
        await dialog.getByTestId('confirm-ok').click()
        await eventually(async () => {
          if ((await seatRow.getAttribute('data-controller')) !== 'open') throw new Error('the seat is not open')
        })

        await expectText(b.getByTestId('notice-removed'), 'no longer in this frame')
        await expectText(b.getByTestId('composer-blocked'), 'no longer in this frame')
        await expectVisible(b.locator('[data-testid="connection-status"][data-status="failed"]'))
        await expectCount(b.getByTestId('composer-input'), 0)
        await expectCount(b.getByTestId('leave-seat'), 0)
        const heard = people.bob.frames.length

        // The table goes on without him: Alice's next outcome never reaches his page.
        const marker = mark('ALICE4')
        await commit(a, await writeIntention(a, `She taps the table twice, ${marker}.`))
        await outcomeWith(a, marker)
        await outcomeWith(gm, marker)
        await narrativeDone(a, alice.seat, marker)
        assert.equal(people.bob.frames.length, heard, `Bob's page heard ${people.bob.frames.length - heard} more message(s) after the kick`)
        assert.ok(!(await b.content()).includes(marker), "the kicked player's page shows what happened after the kick")
        await expectVisible(b.locator('[data-testid="connection-status"][data-status="failed"]'))
      })
    } finally {
      for (const person of Object.values(people)) await person?.context.close().catch(() => {})
    }
  },
  { timeout: 300_000 },
)

// --- a failed pass, and the GM's retry ----------------------------------------------------------

/** A local port nothing listens on (taken, then let go). */
const closedPort = () =>
  new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })

e2e(
  lmix,
  'frames: the storytelling model is unreachable — the player is told, the GM sees the failed pass, fixes the model and retries',
  async ({ page: gm, suite, step: harnessStep }) => {
    const people = { player: null }
    const step = shootingStep(suite, harnessStep, people)
    const member = { key: 'eve', name: 'Eve Harrow' }
    const other = { key: 'finn', name: 'Finn Dale' }
    let frameId
    let inviteUrl
    let broken
    const marker = mark('EVE')

    try {
      await signUp(gm)
      const ready = await step('the GM starts a frame whose storytelling model points at a closed port', async () => {
        const { production } = await createCast(gm, [member, other])
        broken = await api(gm, 'POST', '/api/models', {
          name: unique('Closed port'),
          provider: 'openai_compatible',
          api_endpoint: `http://127.0.0.1:${await closedPort()}/v1`,
          model_id: 'nobody-home',
        })
        const view = await api(gm, 'POST', `/api/productions/${production.id}/frames`, {
          name: unique('Broken model'),
          tempo: Number(TEMPO),
          open_seats: [member.persona],
          medium_model: broken.id,
        })
        frameId = view.id
        inviteUrl = `${lmix.baseURL}/join/${encodeURIComponent(view.invite_code)}`
        member.seat = view.seats.find((s) => s.persona === member.persona).id
        await gm.goto(`/frames/${frameId}/gm`)
        await expectVisible(gm.locator('[data-testid="connection-status"][data-status="open"]'))
      })
      if (!ready) return

      const failed = await step('the pass fails: the player is told nothing is lost; the GM sees the failure and its call', async () => {
        const player = (people.player = await openBrowser(suite))
        const p = player.page
        await signUp(p)
        await p.goto(inviteUrl)
        await p.locator(`[data-testid="join-seat"][data-seat-id="${member.seat}"]`).getByTestId('join-take').click()
        await expectPath(p, `/frames/${frameId}`)
        const card = await writeIntention(p, `She counts the coins on the table, ${marker}.`)
        await commit(p, card)

        await expectText(p.getByTestId('notice-failed'), 'Nothing you wrote is lost', { timeout: 60_000 })
        await expectText(card, marker) // the intention waits, committed
        assert.equal(await card.getAttribute('data-status'), 'committed')
        await expectText(gm.getByTestId('failed-count'), /1 failed/i, { timeout: 30_000 })
        const item = gm.locator('[data-testid="pass-item"][data-status="failed"]')
        await expectVisible(item)
        await expectVisible(item.getByTestId('pass-error'))
        await expectText(item.locator('[data-testid="pass-call"].bad'), 'nobody-home') // the failed call, its model named
        await expectVisible(item.getByTestId('pass-retry'))
        await expectCount(p.getByTestId('feed-outcome'), 0)
      })
      if (!failed) return

      await step('the GM points the model at the offline narrator and retries: the scene is written', async () => {
        const p = people.player.page
        await api(gm, 'PATCH', `/api/models/${broken.id}`, {
          provider: 'offline',
          api_endpoint: 'offline://narrator',
          model_id: 'narrator-again', // (the GM's own Offline Narrator holds "narrator")
        })
        await gm.locator('[data-testid="pass-item"][data-status="failed"]').getByTestId('pass-retry').click()
        await outcomeWith(p, marker)
        await narrativeDone(p, member.seat, marker)
        await expectCount(p.getByTestId('notice-failed'), 0)
        await expectCount(gm.getByTestId('failed-count'), 0, { timeout: 30_000 })
        await outcomeWith(gm, marker)
      })
    } finally {
      await people.player?.context.close().catch(() => {})
    }
  },
  { timeout: 180_000 },
)

// --- a phone, and a very long name ------------------------------------------------------------

e2e(
  lmix,
  'frames: at 390 × 844, with a 200-character character name: the invite, the player page, the personas list and the production page fit',
  async ({ page: gm, suite, step: harnessStep }) => {
    const people = { phone: null }
    const step = shootingStep(suite, harnessStep, people)
    const longName = `Lady ${'Evangeline Maribel Octavia '.repeat(8)}`.slice(0, 197).trim() + ' IX'
    assert.ok(longName.length >= 195 && longName.length <= 200, `${longName.length}`)
    const member = { key: 'long', name: longName }
    const other = { key: 'short', name: 'Dora Pike' }
    let inviteUrl
    let frameId
    let productionId

    const noHorizontalScroll = async (p, where) => {
      const { scrollWidth, clientWidth, wide } = await p.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
        // What sticks out, to say what to fix.
        wide: [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
          .slice(0, 5)
          .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}[${el.getAttribute('data-testid') ?? ''}] right=${Math.round(el.getBoundingClientRect().right)}`),
      }))
      assert.ok(scrollWidth <= 390, `${where}: scrollWidth ${scrollWidth} > 390 (client ${clientWidth}); sticking out: ${JSON.stringify(wide)}`)
    }

    try {
      await signUp(gm)
      const ready = await step('the GM starts a frame whose open seat has a 200-character name', async () => {
        const { production } = await createCast(gm, [member, other])
        productionId = production.id
        const view = await api(gm, 'POST', `/api/productions/${production.id}/frames`, {
          name: `Phone frame ${'with a rather long name '.repeat(4)}`.trim(),
          tempo: Number(TEMPO),
          liquid_visibility: 'all',
          open_seats: [member.persona],
        })
        frameId = view.id
        inviteUrl = `${lmix.baseURL}/join/${encodeURIComponent(view.invite_code)}`
        member.seat = view.seats.find((s) => s.persona === member.persona).id
      })
      if (!ready) return

      await step('a player on a phone joins, plays one turn, and never scrolls sideways', async () => {
        const phone = (people.phone = await openBrowser(suite, { viewport: { width: 390, height: 844 } }))
        const p = phone.page
        await signUp(p)
        await p.goto(inviteUrl)
        const seatCard = p.locator(`[data-testid="join-seat"][data-seat-id="${member.seat}"]`)
        await expectText(seatCard.getByTestId('join-seat-name'), longName.slice(0, 60))
        await noHorizontalScroll(p, 'the invite page')
        await seatCard.getByTestId('join-take').click()
        await expectPath(p, `/frames/${frameId}`)
        await expectText(p.getByTestId('my-character'), longName.slice(0, 20))
        await expectVisible(p.getByTestId('feed-empty'))
        await noHorizontalScroll(p, 'the player page, empty')

        const marker = mark('PHONE')
        const card = await writeIntention(p, `She counts the coins on the table, ${marker}.`)
        await noHorizontalScroll(p, 'the player page with a draft and its verdict')
        await commit(p, card)
        await expectText(card.getByTestId('window-countdown'), /\d+ s/)
        await noHorizontalScroll(p, 'the player page with a countdown')
        await outcomeWith(p, marker)
        // (The narrative is capped at twice its word budget in tokens, and a 200-character name
        // takes most of it: the marker may not be reached.)
        await narrativeDone(p, member.seat)
        await noHorizontalScroll(p, 'the player page with an outcome and a narrative')

        await p.getByTestId('table-toggle').click()
        await expectVisible(p.getByTestId('seat-list'))
        await noHorizontalScroll(p, 'the player page with the table open')

        // The story so far sits in the table panel: its downloads in view, the whole story in a
        // dialog that fits, and the Markdown export an attachment holding the player's story.
        const recap = p.getByTestId('story-recap')
        await expectText(recap.getByTestId('recap-count'), '1 passage')
        const md = recap.getByTestId('export-md')
        const box = await md.boundingBox()
        assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the Markdown download is out of view: ${JSON.stringify(box)}`)
        const exported = await p.request.get(await md.getAttribute('href'))
        assert.equal(exported.status(), 200)
        assert.match(exported.headers()['content-disposition'], /^attachment; filename=".+\.md"$/)
        assert.ok((await exported.text()).includes('## Cast'))
        await recap.getByTestId('recap-read').click()
        await expectCount(p.getByTestId('recap-passage'), 1)
        await noHorizontalScroll(p, 'the story so far, read in its dialog')
      })

      await step('on a phone the GM sees every persona’s buttons and every cast member', async () => {
        await gm.setViewportSize({ width: 390, height: 844 })
        const inView = async (locator, what) => {
          const box = await locator.boundingBox()
          assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${what} is out of view: ${JSON.stringify(box)}`)
        }
        await gm.goto('/personas')
        const row = gm.getByTestId('persona-row').filter({ hasText: longName.slice(0, 30) })
        await expectVisible(row)
        await inView(row.getByTestId('persona-edit'), 'the long-named persona’s Edit')
        await inView(row.getByTestId('persona-delete'), 'the long-named persona’s Delete')
        await noHorizontalScroll(gm, 'the personas list')
        await gm.goto(`/productions/${productionId}`)
        const players = gm.getByTestId('cast-play')
        await expectCount(players, 2)
        for (let i = 0; i < 2; i++) await inView(players.nth(i), `cast member ${i + 1}`)
        await inView(gm.getByTestId('turn-next'), '"Next speaker"')
        await noHorizontalScroll(gm, 'the production page')
      })
    } finally {
      await people.phone?.context.close().catch(() => {})
    }
  },
  { timeout: 150_000 },
)
