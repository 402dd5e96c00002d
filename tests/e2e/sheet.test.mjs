/**
 * The player's character sheet (frontend/src/components/frame/CharacterSheetPanel.vue) on a
 * 390 × 844 phone: open on the first visit with the scene, the character's own secret and its
 * covert group (marked), a fellow covert member's real name; nobody else's secret anywhere on
 * the page; it closes, stays closed after a reload, and never makes the page scroll sideways.
 * Its state section remembers what the GM told the scene once the state pass has run.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { createCast, joinSeat, mark, startFrame } from './frame_setup.mjs'
import { api, e2e, eventually, expectHidden, expectText, expectVisible, signUp, useLmix } from './harness.mjs'

const lmix = useLmix()

e2e(lmix, 'sheet: a player on a phone reads their character sheet, and only theirs', async ({ page: gm, suite, step }) => {
  const marks = { alice: mark('ALICE'), bob: mark('BOB'), carol: mark('CAROL'), ring: mark('RING'), lodge: mark('LODGE') }
  let frameId
  let seat
  let inviteCode

  await signUp(gm)
  const ready = await step('the GM makes a scene: Alice and Bob covertly in the Ring, Carol in the Lodge', async () => {
    const group = (name, secret) => api(gm, 'POST', '/api/affiliations', { name, universal_truth: `${name} exists.`, internal_truth: secret })
    const ring = await group('The Ring', marks.ring)
    const lodge = await group('The Lodge', marks.lodge)
    const member = (name, knownAs, secret, groups, covert) => ({
      name,
      fields: {
        known_as: knownAs,
        universal_truth: `${knownAs} works at the docks.`,
        internal_truth: secret,
        external_truth: `Others think ${knownAs} is harmless.`,
        affiliations: groups,
        covert_affiliations: covert,
      },
    })
    const cast = [
      member('Alice Thompson', 'The Painter', marks.alice, [ring.id], [ring.id]),
      member('Bob Marsh', 'The Porter', marks.bob, [ring.id], [ring.id]),
      member('Carol Vance', 'The Tailor', marks.carol, [lodge.id], []),
    ]
    const { production } = await createCast(gm, cast, { scenario: 'A ship docks late.' })
    const view = await startFrame(gm, production, cast, { name: 'Sheets', open_seats: [cast[0].persona] })
    frameId = view.id
    inviteCode = view.invite_code
    seat = cast[0].seat
  })
  if (!ready) return

  const context = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 390, height: 844 } })
  try {
    const p = await context.newPage()
    await step('on a phone, the sheet opens on the first visit with what Alice may know, and nothing more', async () => {
      await signUp(p)
      await joinSeat(p, inviteCode, seat)
      await p.goto(`/frames/${frameId}`)
      const sheet = p.getByTestId('character-sheet')
      await expectVisible(sheet.getByTestId('sheet-body'))
      await expectText(sheet.getByTestId('sheet-me-secret'), marks.alice)
      await expectText(sheet.getByTestId('sheet-scene'), /A ship docks late\./)
      await expectVisible(sheet.getByTestId('sheet-groups').getByTestId('covert-badge'))
      const bob = sheet.getByTestId('sheet-other').filter({ hasText: 'The Porter' })
      await expectText(bob.getByTestId('sheet-other-real'), '(really Bob Marsh)')
      const carol = sheet.getByTestId('sheet-other').filter({ hasText: 'The Tailor' })
      await expectText(carol, /The Lodge/)
      const text = await p.locator('body').innerText()
      for (const secret of [marks.bob, marks.carol, marks.lodge]) assert.ok(!text.includes(secret), `${secret} is on Alice's page`)
      assert.ok(!text.includes('Carol Vance'), 'Carol’s real name is on Alice’s page')
      assert.ok(text.includes(marks.ring), 'the Ring’s secret, Alice’s to know, is missing')
      const { scrollWidth } = await p.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }))
      assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
      await expectVisible(p.getByTestId('composer-input'))
      // With LMIX_SCREENSHOTS set to a folder (as frames.test.mjs), a picture of the sheet.
      if (process.env.LMIX_SCREENSHOTS) await p.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'sheet-phone.png') })
    })

    await step('it closes, stays closed after a reload, and opens again on demand', async () => {
      await p.getByTestId('sheet-toggle').click()
      await expectHidden(p.getByTestId('sheet-body'))
      await p.reload()
      await expectText(p.getByTestId('sheet-toggle'), /Alice Thompson/)
      await expectHidden(p.getByTestId('sheet-body'))
      await p.getByTestId('sheet-toggle').click()
      await expectText(p.getByTestId('sheet-me-secret'), marks.alice)
    })

    await step('the GM tells the scene something: Alice’s state remembers it, nobody’s secret with it', async () => {
      const news = mark('NEWS')
      await api(gm, 'POST', `/api/frames/${frameId}/narration`, { text: `A bell rings over the harbour. ${news}` })
      const state = p.getByTestId('sheet-state')
      // The state pass runs after the outcome, in the background: read the state again until it is there.
      await eventually(async () => {
        await state.getByTestId('state-refresh').click()
        await expectText(state.getByTestId('state-memories'), news, { timeout: 1000 })
      })
      const text = await state.innerText()
      for (const secret of Object.values(marks)) assert.ok(!text.includes(secret), `${secret} is in Alice's state`)
      const other = await api(gm, 'GET', `/api/frames/${frameId}/seats/${seat}/state`)
      assert.ok(other.memories.some((m) => m.text.includes(news)), 'the GM reads Alice’s memory too')
    })

    await step('another user reads no sheet of Alice’s seat', async () => {
      const other = await context.browser().newContext({ baseURL: suite.baseURL })
      try {
        const o = await other.newPage()
        await signUp(o)
        const answer = await api(o, 'GET', `/api/frames/${frameId}/seats/${seat}/sheet`, undefined, { allowError: true })
        assert.equal(answer.status, 404)
        const state = await api(o, 'GET', `/api/frames/${frameId}/seats/${seat}/state`, undefined, { allowError: true })
        assert.equal(state.status, 404)
      } finally {
        await other.close()
      }
    })
  } finally {
    await context.close().catch(() => {})
  }
})
