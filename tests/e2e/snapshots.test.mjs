/**
 * Character snapshots (docs/snapshots.md): a player exports their character's snapshot from
 * its state section (a JSON file with what it remembers, nobody else's secret); the GM, in
 * the seat's sheet dialog, resets the character (the name typed back) and restores it by
 * importing that file. With LMIX_SCREENSHOTS set, pictures of the two dialogs.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { createCast, joinSeat, mark, startFrame } from './frame_setup.mjs'
import { api, e2e, eventually, expectText, expectVisible, signUp, useLmix } from './harness.mjs'

const lmix = useLmix()

const shoot = async (page, name) => {
  if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, name) })
}

e2e(lmix, 'snapshots: export a character, reset it, import it back', async ({ page: gm, suite, step }) => {
  const marks = { alice: mark('ALICE'), bob: mark('BOB'), news: mark('NEWS') }
  let frameId
  let seat
  let inviteCode
  let file

  await signUp(gm)
  const ready = await step('the GM starts a scene and tells it something', async () => {
    const member = (name, secret) => ({ name, fields: { universal_truth: `${name} is here.`, internal_truth: secret } })
    const cast = [member('Alice Thompson', marks.alice), member('Bob Marsh', marks.bob)]
    const { production } = await createCast(gm, cast)
    const view = await startFrame(gm, production, cast, { name: 'Snapshots', open_seats: [cast[0].persona] })
    frameId = view.id
    inviteCode = view.invite_code
    seat = cast[0].seat
  })
  if (!ready) return

  const context = await suite.browser.newContext({ baseURL: suite.baseURL, acceptDownloads: true })
  try {
    const p = await context.newPage()
    await step('the player’s "Export snapshot" downloads what Alice remembers, and only hers', async () => {
      await signUp(p)
      await joinSeat(p, inviteCode, seat)
      await p.goto(`/frames/${frameId}`)
      await api(gm, 'POST', `/api/frames/${frameId}/narration`, { text: `A bell rings over the harbour. ${marks.news}` })
      const state = p.getByTestId('sheet-state')
      await eventually(async () => {
        await state.getByTestId('state-refresh').click()
        await expectText(state.getByTestId('state-memories'), marks.news, { timeout: 1000 })
      })
      const [download] = await Promise.all([p.waitForEvent('download'), state.getByTestId('snapshot-export').click()])
      assert.match(download.suggestedFilename(), /^Alice_Thompson-\d{8}-\d{6}\.snapshot\.json$/)
      file = await readFile(await download.path())
      const text = file.toString()
      const data = JSON.parse(text)
      assert.equal(data._snapshot_info.format, 'lmix-snapshot')
      assert.ok(data.current_state.memorable_episodes.some((m) => m.summary.includes(marks.news)))
      assert.ok(text.includes(marks.alice), 'her own secret is hers')
      assert.ok(!text.includes(marks.bob), 'Bob’s secret is in Alice’s snapshot')
      assert.equal(await state.getByTestId('snapshot-reset').count(), 0)
    })

    await step('the GM resets Alice: only with her name typed back', async () => {
      await gm.goto(`/frames/${frameId}/gm`)
      await gm.locator(`[data-seat-id="${seat}"]`).getByTestId('gm-seat-sheet').click()
      const dialog = gm.getByTestId('gm-sheet-dialog')
      await dialog.getByTestId('snapshot-reset').click()
      const reset = gm.getByTestId('snapshot-reset-dialog')
      await expectVisible(reset)
      const ok = reset.getByTestId('snapshot-reset-ok')
      await reset.getByTestId('snapshot-confirm').fill('alice')
      assert.equal(await ok.isDisabled(), true)
      await reset.getByTestId('snapshot-confirm').fill('Alice Thompson')
      await shoot(gm, 'snapshot-reset.png')
      await ok.click()
      await expectText(reset.getByTestId('snapshot-done'), /memories cleared/)
      const state = await api(gm, 'GET', `/api/frames/${frameId}/seats/${seat}/state`)
      assert.equal(state.memories.length, 0)
      await reset.getByTestId('modal-close').click()
    })

    await step('the GM imports the player’s file back into Alice', async () => {
      const dialog = gm.getByTestId('gm-sheet-dialog')
      await dialog.getByTestId('snapshot-import').click()
      const importing = gm.getByTestId('snapshot-import-dialog')
      await importing.getByTestId('snapshot-file').setInputFiles({ name: 'alice.snapshot.json', mimeType: 'application/json', buffer: file })
      await expectText(importing, /A snapshot of Alice Thompson/)
      await importing.getByTestId('snapshot-import-ok').click()
      await expectText(importing.getByTestId('snapshot-done'), /Restored: affinity, mood, facts, memories/)
      await shoot(gm, 'snapshot-import.png')
      const state = await api(gm, 'GET', `/api/frames/${frameId}/seats/${seat}/state`)
      assert.ok(state.memories.some((m) => m.text.includes(marks.news)))
      const kept = await api(gm, 'GET', `/api/frames/${frameId}/snapshots`)
      assert.deepEqual(kept.snapshots.map((s) => s.kind).sort(), ['export', 'import', 'reset'])
      await importing.getByTestId('modal-close').click()
    })

    await step('after another reset, the snapshot it took restores Alice from the list, no file needed', async () => {
      await api(gm, 'POST', `/api/frames/${frameId}/seats/${seat}/reset`, { confirm: 'Alice Thompson' })
      assert.equal((await api(gm, 'GET', `/api/frames/${frameId}/seats/${seat}/state`)).memories.length, 0)
      await gm.getByTestId('gm-sheet-dialog').getByTestId('snapshot-import').click()
      const importing = gm.getByTestId('snapshot-import-dialog')
      const newest = importing.getByTestId('snapshot-kept-row').first()
      await expectText(newest, /Before a reset/)
      await shoot(gm, 'snapshot-kept.png')
      await newest.getByTestId('snapshot-kept-restore').click()
      await expectText(importing.getByTestId('snapshot-done'), /1 memory added/)
      const state = await api(gm, 'GET', `/api/frames/${frameId}/seats/${seat}/state`)
      assert.ok(state.memories.some((m) => m.text.includes(marks.news)))
    })
  } finally {
    await context.close().catch(() => {})
  }
})
