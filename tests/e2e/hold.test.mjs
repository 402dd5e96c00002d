/**
 * The outcome leak guard holds (docs/synthesis.md, "The secret guard"): the storytelling
 * model (the fake server, answering every structured request with one outcome) lets Bob's
 * secret slip into Alice's outcome. Bob's page shows only "The GM is reviewing this moment"
 * (the marker nowhere in his page nor on his socket); the GM's page shows the outcome, held,
 * with the guard's flag, and releases it; then both players read it, and Alice's narrative,
 * which waited, arrives.
 */
import assert from 'node:assert/strict'
import { api, e2e, eventually, expectHidden, expectText, expectVisible, signUp, unique, useLmix } from './harness.mjs'
import { commit, shoot, narrativeDone, outcomeWith, recordSocket, writeIntention } from './frame_setup.mjs'

const MARKER = `HELD-${unique('x').slice(2)}`
const SECRET = 'Bob Marsh sells the harbour maps to smugglers.'
// Every bones call gets this answer: Alice's action, and a fact that repeats Bob's secret.
const BONES = {
  actions_resolved: [{ seat: 'Alice Thompson', action: 'looks hard at Bob', result: 'success' }],
  world_facts: [`Everyone can tell he sells the harbour maps to smugglers. ${MARKER}`],
  interrupts: [],
}

const lmix = useLmix({ fakeLLM: { structured: BONES } })

e2e(lmix, 'hold: the GM reviews an outcome that repeats a secret before any player reads it', async ({ page: gm, suite, step }) => {
  let frameId
  let inviteCode
  let seats
  await signUp(gm)
  const ready = await step('the GM starts a frame that holds (the default), on the fake storytelling model', async () => {
    const world = await api(gm, 'POST', '/api/worlds', { name: unique('World'), description: 'A rainy harbour town.' })
    const scenario = await api(gm, 'POST', '/api/scenarios', { name: unique('Scenario'), description: 'A ship docks late.' })
    const offline = (await api(gm, 'GET', '/api/models')).find((m) => m.api_endpoint === 'offline://narrator')
    const fake = await api(gm, 'POST', '/api/models', { name: unique('Fake'), provider: 'openai_compatible', api_endpoint: suite.fakeLLMURL, model_id: 'fake-gpt' })
    const persona = (name, secret) => api(gm, 'POST', '/api/personas', { name, universal_truth: `${name} works at the docks.`, internal_truth: secret, external_truth: '' })
    const cast = [await persona('Alice Thompson', 'Alice once sank a boat.'), await persona('Bob Marsh', SECRET)]
    const assistants = []
    for (const p of cast) assistants.push((await api(gm, 'POST', '/api/assistants', { persona: p.id, model: offline.id })).id)
    const production = await api(gm, 'POST', '/api/productions', { name: unique('Hold'), world: world.id, scenario: scenario.id, assistants, show_directive: false })
    const view = await api(gm, 'POST', `/api/productions/${production.id}/frames`, {
      name: 'Maps',
      tempo: 0.1, // a window of a few seconds
      open_seats: cast.map((c) => c.id),
      soft_model: offline.id,
      medium_model: fake.id,
    })
    assert.equal(view.leak_guard, 'hold')
    frameId = view.id
    inviteCode = view.invite_code
    seats = cast.map((c) => view.seats.find((s) => s.persona === c.id).id)
  })
  if (!ready) return

  const aliceContext = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 1366, height: 900 } })
  const bobContext = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 1366, height: 900 } })
  try {
    const alice = await aliceContext.newPage()
    const bob = await bobContext.newPage()
    const bobHeard = recordSocket(bob, { url: '/ws/frames/' })
    await step('two players take a seat each and open the frame; the GM opens the GM page', async () => {
      await signUp(alice)
      await signUp(bob)
      await api(alice, 'POST', '/api/frames/join', { invite_code: inviteCode, seat: seats[0] })
      await api(bob, 'POST', '/api/frames/join', { invite_code: inviteCode, seat: seats[1] })
      await alice.goto(`/frames/${frameId}`)
      await bob.goto(`/frames/${frameId}`)
      await gm.goto(`/frames/${frameId}/gm`)
      await expectVisible(bob.getByTestId('composer-input'))
      await expectVisible(gm.getByTestId('frame-settings'))
    })

    await step('Alice acts; the players see only that the GM is reviewing the moment', async () => {
      await commit(alice, await writeIntention(alice, 'I look at Bob.'))
      for (const page of [alice, bob]) {
        await expectText(page.getByTestId('outcome-held'), 'The GM is reviewing this moment.')
        assert.equal(await page.getByTestId('feed-outcome').count(), 0)
        assert.ok(!(await page.content()).includes(MARKER), 'the held outcome reached a player’s page')
      }
      assert.ok(!JSON.stringify(bobHeard).includes(MARKER), 'the held outcome reached Bob’s socket')
      assert.equal(await alice.getByTestId('feed-narrative').count(), 0) // her narrative waits too
    })

    await step('the GM sees it whole, held and flagged, and releases it', async () => {
      const held = gm.getByTestId('feed-outcome').filter({ hasText: MARKER })
      await expectVisible(held.getByTestId('outcome-held-badge'))
      await expectText(held.getByTestId('outcome-flags'), /internal truth of Bob Marsh/)
      // With LMIX_SCREENSHOTS set, the review on a desktop and a 390 px phone.
      await held.scrollIntoViewIfNeeded()
      await shoot(gm, 'hold-review-desktop.png')
      const desktop = gm.viewportSize()
      await gm.setViewportSize({ width: 390, height: 844 })
      await held.scrollIntoViewIfNeeded()
      await shoot(gm, 'hold-review-phone.png')
      await shoot(bob, 'hold-player-desktop.png')
      await gm.setViewportSize(desktop)
      await held.getByTestId('outcome-release').click()
      await expectHidden(held.getByTestId('outcome-held-badge'))
    })

    await step('both players read the outcome now, and Alice’s narrative arrives', async () => {
      for (const page of [alice, bob]) {
        await outcomeWith(page, MARKER)
        await expectHidden(page.getByTestId('outcome-held'))
      }
      await narrativeDone(alice, seats[0])
      await eventually(async () => assert.ok(JSON.stringify(bobHeard).includes(MARKER)), { message: 'Bob’s socket heard the release' })
    })
  } finally {
    await aliceContext.close()
    await bobContext.close()
  }
})
