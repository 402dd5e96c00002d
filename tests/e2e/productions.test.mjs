/**
 * Productions: a live AI-to-AI conversation in the browser.
 *
 * "create a production of three assistants on the offline narrator; play three turns and
 * watch them stream; open the directive panel and read the compiled prompt; regenerate and
 * see 2/2; reload and find everything."
 *
 * Set-up (world, scenario, personas, assistants) goes through the REST API for speed; the
 * production itself is created through the UI's modal. Each persona's internal truth holds a
 * unique marker, so the directive panel can prove a speaker's prompt holds its own secret and
 * nobody else's.
 */
import assert from 'node:assert/strict'
import {
  api,
  e2e,
  eventually,
  expectCount,
  expectHidden,
  expectPath,
  expectText,
  expectVisible,
  networkIdle,
  signUp,
  unique,
  useLmix,
} from './harness.mjs'

const lmix = useLmix()

const CAST = [
  { key: 'alice', name: 'Alice Thompson', secret: 'ALICE-SECRET-e2e' },
  { key: 'bob', name: 'Bob Marsh', secret: 'BOB-SECRET-e2e' },
  { key: 'carol', name: 'Carol Vance', secret: 'CAROL-SECRET-e2e' },
]

/**
 * Record, in the page, every state each turn goes through: status, visible text (the turn's
 * own text, not the "Thinking" placeholder) and whether the typing indicator shows. A
 * MutationObserver sees every DOM update, so growth is caught however fast it is.
 */
async function recordTurns(page) {
  await page.evaluate(() => {
    const w = window
    w.__turnSamples = {}
    const sample = () => {
      for (const el of document.querySelectorAll('[data-testid="turn-item"]')) {
        const id = el.getAttribute('data-turn-id')
        const content = el.querySelector('[data-testid="turn-content"]')
        // The rendered story without Markdown's marks: a half-streamed "*action" shows its
        // star until the closing one arrives.
        const story = content?.querySelector('.story')
        const text = story ? story.textContent.replace(/[*_]/g, '').trim() : ''
        const entry = {
          status: el.getAttribute('data-status'),
          text,
          typing: !!el.querySelector('[data-testid="turn-typing"]'),
        }
        const list = (w.__turnSamples[id] ??= [])
        const last = list[list.length - 1]
        if (!last || last.status !== entry.status || last.text !== entry.text || last.typing !== entry.typing) list.push(entry)
      }
    }
    sample()
    w.__turnObserver?.disconnect()
    w.__turnObserver = new MutationObserver(sample)
    w.__turnObserver.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true })
  })
}

const samplesOf = (page, turnId) => page.evaluate((id) => window.__turnSamples?.[id] ?? [], turnId)

/** The turns of the visible branch, top to bottom. */
const turnItems = (page) => page.getByTestId('transcript').getByTestId('turn-item')

/** Wait for the turn to be done (not failed) and return its final text. */
async function waitDone(turn) {
  await eventually(
    async () => {
      const status = await turn.getAttribute('data-status')
      if (status === 'failed') {
        const error = await turn.getByTestId('turn-error').innerText().catch(() => '')
        throw Object.assign(new Error(`the turn failed: ${error}`), { fatal: true })
      }
      if (status !== 'done') throw new Error(`status is ${status}`)
    },
    { timeout: 30_000, message: 'the turn did not finish' },
  )
  await expectCount(turn.getByTestId('turn-typing'), 0)
  return shownText(turn)
}

/** A turn's text as shown, without Markdown's marks (as `recordTurns` samples it). */
const shownText = async (turn) => (await turn.getByTestId('turn-content').innerText()).replace(/[*_]/g, '').trim()

/**
 * Assert that the turn was watched streaming: while its typing indicator showed, its text
 * was seen non-empty at two or more lengths, each a prefix of the next, then the final text.
 */
async function assertStreamed(page, turnId, finalText) {
  const samples = await samplesOf(page, turnId)
  const live = samples.filter((s) => s.typing && (s.status === 'pending' || s.status === 'streaming') && s.text)
  const lengths = [...new Set(live.map((s) => s.text.length))]
  const summary = JSON.stringify(samples.map((s) => [s.status, s.typing, s.text.length]))
  if (process.env.E2E_VERBOSE) console.log(`[e2e] turn ${turnId} streamed through ${lengths.length} partial lengths: ${summary}`)
  assert.ok(
    lengths.length >= 2,
    `expected to watch the turn's text grow while it streamed; saw ${lengths.length} partial length(s). ` +
      `Samples [status, typing, length]: ${summary}`,
  )
  for (let i = 1; i < live.length; i++) {
    assert.ok(live[i].text.startsWith(live[i - 1].text), `streamed text did not grow by appending: ${summary}`)
  }
  assert.ok(finalText.startsWith(live[live.length - 1].text), 'the final text does not continue the streamed text')
  assert.ok(finalText.length > live[live.length - 1].text.length || live.length >= 2)
  const last = samples[samples.length - 1]
  assert.equal(last.status, 'done')
  assert.equal(last.typing, false)
}

/** Press a cast member's play button; wait for the new turn, watch it stream, return it. */
async function play(page, member, position) {
  await page.getByRole('button', { name: `Play ${member.name}` }).click()
  const items = turnItems(page)
  await expectCount(items, position)
  const turn = items.nth(position - 1)
  await expectText(turn.getByTestId('turn-speaker'), member.name)
  const id = await turn.getAttribute('data-turn-id')
  const text = await waitDone(turn)
  assert.ok(text.length > 20, `the turn's text is too short: ${JSON.stringify(text)}`)
  await assertStreamed(page, id, text)
  return { id, text, locator: page.locator(`[data-testid="turn-item"][data-turn-id="${id}"]`) }
}

/** Open a turn's directive panel and return its text (after checking whose it is). */
async function readDirective(page, turn, member) {
  const button = turn.getByTestId('turn-directive')
  await eventually(
    async () => {
      if (!(await button.isVisible())) throw new Error('no Directive button')
    },
    { message: `${member.name}'s finished turn offers no Directive button although the production shows directives` },
  )
  await button.click()
  const panel = page.getByTestId('directive-panel')
  await expectVisible(panel)
  await expectText(panel, `for ${member.name}`)
  await expectVisible(panel.locator('[data-testid="directive-message"][data-role="system"]'))
  const text = await panel.innerText()
  await panel.getByTestId('directive-close').click()
  await expectHidden(panel)
  return text
}

function assertOwnSecretsOnly(directive, member) {
  assert.ok(directive.includes('YOU ARE:'), 'the directive has no "YOU ARE:" section')
  assert.match(directive, new RegExp(`YOU ARE:\\s*${member.name}`))
  assert.ok(directive.includes(member.secret), `${member.name}'s directive lacks their own secret ${member.secret}`)
  for (const other of CAST.filter((c) => c !== member)) {
    assert.ok(!directive.includes(other.secret), `${member.name}'s directive leaks ${other.name}'s secret ${other.secret}`)
  }
}

e2e(
  lmix,
  'productions: three offline assistants stream three turns, show their directives, regenerate to 2/2, and persist',
  async ({ page, step }) => {
    await signUp(page)
    const name = unique('Harbour Night')
    let world
    let scenario
    let productionId
    const turns = []
    let regen

    const created = await step('create a production of three assistants on the offline narrator', async () => {
      // Set-up through the API: world, scenario, three personas with secrets, three assistants.
      world = await api(page, 'POST', '/api/worlds', { name: unique('World'), description: 'A rainy harbour town.' })
      scenario = await api(page, 'POST', '/api/scenarios', {
        name: unique('Scenario'),
        description: 'Three strangers share a table at the harbour inn.',
      })
      const offline = (await api(page, 'GET', '/api/models')).find((m) => m.api_endpoint === 'offline://narrator')
      assert.ok(offline, 'the new user has no Offline Narrator model')
      for (const member of CAST) {
        const persona = await api(page, 'POST', '/api/personas', {
          name: member.name,
          universal_truth: `${member.name} is a traveller.`,
          internal_truth: `${member.secret}: ${member.name} hides a stolen map.`,
          external_truth: `Others think ${member.name} is a merchant.`,
        })
        member.assistant = (await api(page, 'POST', '/api/assistants', { persona: persona.id, model: offline.id })).id
      }

      // The production, through the UI's create modal.
      await page.goto('/productions')
      await expectVisible(page.getByTestId('production-empty'))
      await page.getByTestId('production-new').click()
      const modal = page.getByTestId('production-modal')
      await expectVisible(modal)
      await modal.getByLabel('Name').fill(name)
      await modal.getByTestId('field-world').selectOption(world.id)
      await modal.getByTestId('field-scenario').selectOption(scenario.id)
      for (const member of CAST) await modal.getByTestId(`assistant-check-${member.assistant}`).check()
      await expectText(modal.getByTestId('field-assistants'), '3 selected')
      await modal.getByTestId('field-show_directive').check()
      await modal.getByTestId('form-save').click()
      await expectPath(page, /^\/productions\/[0-9a-f-]{36}$/)
      productionId = new URL(page.url()).pathname.split('/').pop()

      await expectText(page.getByTestId('production-name'), name)
      await expectText(page.getByTestId('production-world'), world.name)
      await expectText(page.getByTestId('production-scenario'), scenario.name)
      await expectCount(page.getByTestId('cast-play'), 3)
      await expectVisible(page.getByTestId('transcript-empty'))
      await expectVisible(page.locator('[data-testid="connection-status"][data-status="open"]'))
    })
    if (!created) return

    const played = await step('play three turns and watch them stream', async () => {
      await recordTurns(page)
      for (const [i, member] of CAST.entries()) turns.push(await play(page, member, i + 1))
      await expectCount(turnItems(page), 3)
    })
    if (!played) return

    await step("open the directive panel: each speaker's prompt holds its own secret only", async () => {
      for (const [i, member] of CAST.entries()) {
        assertOwnSecretsOnly(await readDirective(page, turns[i].locator, member), member)
      }
    })

    const regenerated = await step('regenerate the last turn and see 2/2, then 1/2 and back', async () => {
      const carol = CAST[2]
      await turns[2].locator.getByTestId('turn-regenerate').click()
      const third = turnItems(page).nth(2)
      await eventually(
        async () => {
          if ((await third.getAttribute('data-turn-id')) === turns[2].id) throw new Error('the third turn is still the original')
        },
        { message: 'the regenerated turn did not replace the original in view' },
      )
      const id = await third.getAttribute('data-turn-id')
      await expectText(third.getByTestId('turn-speaker'), carol.name)
      const text = await waitDone(page.locator(`[data-testid="turn-item"][data-turn-id="${id}"]`))
      await assertStreamed(page, id, text)
      regen = { id, text }
      await expectCount(turnItems(page), 3)
      await expectText(third.getByTestId('sibling-counter'), '2/2')
      assert.equal(await third.getByTestId('sibling-next').isDisabled(), true)

      // Back to 1/2 (the original text), then forward to 2/2 again.
      await third.getByTestId('sibling-prev').click()
      await expectText(third.getByTestId('sibling-counter'), '1/2')
      assert.equal(await third.getAttribute('data-turn-id'), turns[2].id)
      assert.equal(await shownText(third), turns[2].text)
      assert.equal(await third.getByTestId('sibling-prev').isDisabled(), true)
      await third.getByTestId('sibling-next').click()
      await expectText(third.getByTestId('sibling-counter'), '2/2')
      assert.equal(await third.getAttribute('data-turn-id'), regen.id)
      assert.equal(await shownText(third), regen.text)
    })
    if (!regenerated) return

    await step('reload and find everything', async () => {
      // The same three turns on the visible branch, the last one at 2/2.
      await networkIdle(page)
      await page.reload()
      await expectPath(page, `/productions/${productionId}`)
      await expectText(page.getByTestId('production-name'), name)
      await expectCount(turnItems(page), 3)
      const after = turnItems(page)
      for (const [i, member] of CAST.entries()) {
        await expectText(after.nth(i).getByTestId('turn-speaker'), member.name)
        assert.equal(await after.nth(i).getAttribute('data-status'), 'done')
      }
      assert.equal(await shownText(after.nth(0)), turns[0].text)
      assert.equal(await shownText(after.nth(1)), turns[1].text)
      await expectText(after.nth(2).getByTestId('sibling-counter'), '2/2')
      assert.equal(await after.nth(2).getAttribute('data-turn-id'), regen.id)
      assert.equal(await shownText(after.nth(2)), regen.text)
      // The directives are still there: the regenerated turn's, then the first one's.
      assertOwnSecretsOnly(await readDirective(page, after.nth(2), CAST[2]), CAST[2])
      assertOwnSecretsOnly(await readDirective(page, after.nth(0), CAST[0]), CAST[0])
      await after.nth(2).getByTestId('sibling-prev').click()
      await expectText(after.nth(2).getByTestId('sibling-counter'), '1/2')
      assert.equal(await shownText(after.nth(2)), turns[2].text)

      // The list shows the production with its four turns (three plus the regenerated one).
      await page.getByRole('link', { name: '‹ Productions' }).click()
      await expectPath(page, '/productions')
      const row = page.getByTestId('production-row').filter({ hasText: name })
      await expectVisible(row)
      await expectText(row, world.name)
      const cells = await row.locator('td').allInnerTexts()
      assert.ok(cells.some((c) => c.trim() === '4'), `the row shows no turn count of 4: ${JSON.stringify(cells)}`)
      const detail = await api(page, 'GET', `/api/productions/${productionId}`)
      assert.equal(detail.turns.length, 4)
      assert.ok(detail.turns.every((t) => t.status === 'done'))
    })
  },
  { timeout: 150_000 },
)
