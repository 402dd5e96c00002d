/**
 * The GM's diagnostics: a player commits an intention on the offline narrator; the GM opens
 * "Diagnostics" and finds the soft pass's call and the medium pass's (bones and flesh), with
 * tokens and no error; a row leads to its pass in the passes list; "Let the AI act" adds the
 * AI character's call after a refresh; on a 390 × 844 phone the calls are cards, with no
 * sideways scroll. With LMIX_SCREENSHOTS set, pictures of the drawer on both.
 */
import assert from 'node:assert/strict'
import { createCast, openBrowser, shoot, shootingStep, startFrame, joinSeat, writeIntention, commit, narrativeDone, mark } from './frame_setup.mjs'
import { e2e, eventually, expectHidden, expectText, expectVisible, signUp, useLmix } from './harness.mjs'

const lmix = useLmix()


e2e(lmix, 'diagnostics: the GM reads every model call of the frame, and goes from a call to its pass', async ({ page: gm, suite, step: harnessStep }) => {
  const cast = [{ name: 'Alice Thompson' }, { name: 'Bob Marsh' }]
  const people = {}
  const step = shootingStep(suite, harnessStep, people)
  let frame

  await signUp(gm)
  const ready = await step('the GM starts a frame: Alice waits for a player, Bob is played by the AI', async () => {
    const { production } = await createCast(gm, cast)
    frame = await startFrame(gm, production, cast, { name: 'Diagnostics night', tempo: 0.1, open_seats: [cast[0].persona] })
  })
  if (!ready) return

  try {
    people.alice = await openBrowser(suite)
    const alice = people.alice.page
    const marker = mark('ALICE')
    const narrated = await step('a player takes Alice’s seat and commits an intention; it is narrated', async () => {
      await signUp(alice)
      await joinSeat(alice, frame.invite_code, cast[0].seat)
      await alice.goto(`/frames/${frame.id}`)
      const card = await writeIntention(alice, `I light the lantern ${marker}.`)
      await commit(alice, card)
      await narrativeDone(alice, cast[0].seat)
    })
    if (!narrated) return

    const dialog = gm.getByTestId('gm-diagnostics-dialog')
    const row = (purpose) => dialog.locator(`[data-testid="call-row"][data-purpose="${purpose}"]`)
    await step('the GM opens Diagnostics and sees the soft and medium calls, newest first', async () => {
      await gm.goto(`/frames/${frame.id}/gm`)
      await expectVisible(gm.getByTestId('pass-item').first())
      await gm.getByTestId('gm-diagnostics').click()
      await expectVisible(dialog)
      for (const purpose of ['synthesis.soft', 'synthesis.bones', 'synthesis.flesh']) {
        await expectVisible(row(purpose).first())
        await expectText(row(purpose).first().getByTestId('call-status'), 'ok')
        await expectText(row(purpose).first(), /Alice Thompson/)
      }
      await expectText(row('synthesis.soft').first(), /Reading an intention/)
      const purposes = await dialog.getByTestId('call-row').evaluateAll((rows) => rows.map((r) => r.dataset.purpose))
      assert.ok(purposes.indexOf('synthesis.flesh') < purposes.indexOf('synthesis.bones'), `not newest first: ${purposes}`)
      assert.ok(purposes.indexOf('synthesis.bones') < purposes.lastIndexOf('synthesis.soft'), `not newest first: ${purposes}`)
      const calls = Number(await dialog.getByTestId('totals-calls').innerText())
      assert.equal(calls, purposes.length)
      await expectText(dialog.getByTestId('totals-errors'), '0')
      const tokens = await row('synthesis.bones').first().getByTestId('call-tokens').innerText()
      assert.match(tokens, /^[1-9]\d* \/ [1-9]\d*$/)
      await shoot(gm, 'diagnostics-gm-desktop.png')
    })

    await step('a call’s row opens, and leads to its pass in the passes list', async () => {
      const bones = row('synthesis.bones').first()
      await bones.getByTestId('call-toggle').click()
      const detail = dialog.getByTestId('call-detail')
      await expectText(detail, /Offline narrator/)
      await detail.getByTestId('call-pass').click()
      await expectHidden(dialog)
      const shown = gm.locator('[data-testid="pass-item"].shown')
      await expectVisible(shown)
      await expectText(shown, /medium/)
      await eventually(async () => {
        const box = await shown.boundingBox()
        const height = gm.viewportSize().height
        if (!box || box.y + box.height < 0 || box.y > height) throw new Error(`the pass is not in view: ${JSON.stringify(box)}`)
      })
    })

    await step('after "Let the AI act", a refresh lists the AI character’s call', async () => {
      await gm.getByTestId('gm-advance').click()
      await gm.getByTestId('gm-diagnostics').click()
      await expectVisible(dialog)
      await eventually(
        async () => {
          await dialog.getByTestId('calls-refresh').click()
          await expectVisible(row('synthesis.ai_act').first(), { timeout: 1500 })
        },
        { timeout: 30_000, message: 'no AI call listed' },
      )
      await expectText(row('synthesis.ai_act').first(), /Bob Marsh/)
      await expectText(row('synthesis.ai_act').first(), /AI character acting/)
    })

    await step('on a 390 px phone the calls are cards, with no sideways scroll', async () => {
      await gm.setViewportSize({ width: 390, height: 844 })
      await expectVisible(row('synthesis.soft').first())
      const widths = await gm.evaluate(() => {
        const panel = document.querySelector('[data-testid="gm-diagnostics-dialog"]')
        return { page: document.documentElement.scrollWidth, panel: panel.scrollWidth, panelClient: panel.clientWidth }
      })
      assert.ok(widths.page <= 390, `page scrollWidth ${widths.page} > 390`)
      assert.ok(widths.panel <= widths.panelClient, `the drawer scrolls sideways: ${JSON.stringify(widths)}`)
      const header = dialog.locator('thead')
      assert.equal(await header.evaluate((el) => el.getBoundingClientRect().height <= 1), true, 'the table header still shows')
      await shoot(gm, 'diagnostics-gm-phone.png')
      const bones = row('synthesis.bones').first()
      await bones.getByTestId('call-toggle').click()
      await expectVisible(dialog.getByTestId('call-pass'))
      await dialog.getByTestId('call-detail').scrollIntoViewIfNeeded()
      assert.ok((await gm.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'an open row scrolls sideways')
      await shoot(gm, 'diagnostics-gm-phone-row.png')
    })
  } finally {
    await people.alice?.context.close().catch(() => {})
  }
})
