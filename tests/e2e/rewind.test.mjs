/**
 * Rewind and regenerate (docs/synthesis.md, "Rewind and regenerate"), on the offline
 * narrator: Alice plays an outcome; the GM closes the scene (Alice's feed shows the scene 2
 * divider); Alice plays another in scene 2; the GM rewinds to the first (the dialog shows the
 * dry run's list first); Alice's page re-reads and no longer shows the second nor the scene 2
 * divider (nor does her socket carry it); the GM restores it (both back); then regenerates
 * the first with a rewritten intention (the new outcome reaches Alice, the second and the
 * divider go again) and restores the regenerate: the first story and the divider are back.
 * With LMIX_SCREENSHOTS set, pictures of the rewind dialog at 1366 px and 390 px.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { e2e, eventually, expectCount, expectHidden, expectText, expectVisible, signUp, useLmix } from './harness.mjs'
import { commit, createCast, joinSeat, mark, narrativeDone, openBrowser, outcomeWith, shootingStep, startFrame, writeIntention } from './frame_setup.mjs'

const lmix = useLmix()
const FIRST = mark('FIRST')
const LATER = mark('LATER')
const REDO = mark('REDO')

async function shoot(page, name) {
  if (!process.env.LMIX_SCREENSHOTS) return
  await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, name) })
}

e2e(
  lmix,
  'rewind: play, close a scene, play, rewind to an outcome after a dry run (the player resyncs, the scene reopens), regenerate with an edit, restore',
  async ({ page: gm, suite, step: harnessStep }) => {
    const cast = [{ name: 'Alice Thompson' }, { name: 'Bob Marsh' }]
    let view
    const alice = await openBrowser(suite)
    const step = shootingStep(suite, harnessStep, { alice })
    try {
      const ready = await step('the GM starts a frame; Alice takes her seat; both pages open', async () => {
        await signUp(gm)
        const { production } = await createCast(gm, cast)
        // Bob's seat stays open: nobody acts but Alice.
        view = await startFrame(gm, production, cast, { name: 'Rewind', tempo: 0.1, open_seats: cast.map((m) => m.persona) })
        await signUp(alice.page)
        await joinSeat(alice.page, view.invite_code, cast[0].seat)
        await alice.page.goto(`/frames/${view.id}`)
        await gm.goto(`/frames/${view.id}/gm`)
        await expectVisible(alice.page.getByTestId('composer-input'))
        await expectVisible(gm.getByTestId('frame-settings'))
      })
      if (!ready) return

      const played = await step('Alice plays an outcome, the GM closes the scene, Alice plays another in scene 2', async () => {
        await commit(alice.page, await writeIntention(alice.page, `I open the shutters, ${FIRST}.`))
        await outcomeWith(alice.page, FIRST)
        await narrativeDone(alice.page, cast[0].seat)
        await outcomeWith(gm, FIRST)
        await gm.getByTestId('scene-close-title').fill('The docks')
        await gm.getByTestId('scene-close-button').click()
        await expectText(gm.getByTestId('scene-title'), 'Scene 2 — The docks')
        await expectText(alice.page.getByTestId('scene-title'), 'Scene 2 — The docks')
        await commit(alice.page, await writeIntention(alice.page, `I light the lamp, ${LATER}.`))
        await outcomeWith(alice.page, LATER)
        await outcomeWith(gm, LATER)
        await narrativeDone(gm, cast[0].seat, LATER)
      })
      if (!played) return

      const first = gm.getByTestId('feed-outcome').filter({ hasText: FIRST })
      await step('the GM asks to rewind to the first: the dialog lists what would be undone first', async () => {
        await first.getByTestId('outcome-rewind').click()
        const dialog = gm.getByTestId('rewind-dialog')
        await expectVisible(dialog.getByTestId('rewind-preview'))
        await expectVisible(dialog.getByTestId('rewind-outcome').filter({ hasText: LATER }))
        const counts = await dialog.getByTestId('rewind-counts').textContent()
        assert.match(counts, /^1 outcome, 1 narrative, 1 intention/)
        assert.match(counts, /1 later scene, 1 scene reopened$/)
        await shoot(gm, 'rewind-dialog-1366.png')
        await gm.setViewportSize({ width: 390, height: 844 })
        await shoot(gm, 'rewind-dialog-390.png')
        await gm.setViewportSize({ width: 1366, height: 900 })
        await dialog.getByTestId('rewind-confirm').click()
        await expectHidden(dialog)
      })

      await step('Alice’s page re-reads: the second outcome, its story and the scene 2 divider are gone, the first stays', async () => {
        await expectCount(alice.page.getByTestId('feed-outcome').filter({ hasText: LATER }), 0)
        await expectCount(alice.page.getByTestId('scene-divider'), 0)
        await expectCount(gm.getByTestId('scene-divider'), 0)
        await eventually(async () => {
          if ((await alice.page.content()).includes(LATER)) throw new Error('the rewound outcome is still on Alice’s page')
        })
        await expectVisible(alice.page.getByTestId('feed-outcome').filter({ hasText: FIRST }))
        assert.ok(alice.frames.some((f) => f.msg?.type === 'frame.rewound'), 'Alice’s socket heard no frame.rewound')
        await expectVisible(gm.getByTestId('rewind-item'))
        await gm.getByTestId('rewinds').scrollIntoViewIfNeeded()
        await shoot(gm, 'rewind-banner-1366.png')
        assert.ok(!(await gm.getByTestId('feed').textContent()).includes(LATER))
      })

      await step('the GM restores the rewind: the second outcome and the scene 2 divider are back', async () => {
        await gm.getByTestId('rewind-item').filter({ hasText: 'Rewound' }).getByTestId('rewind-restore').click()
        await outcomeWith(alice.page, LATER)
        await expectText(alice.page.getByTestId('scene-title'), 'Scene 2 — The docks')
        await expectText(gm.getByTestId('scene-title'), 'Scene 2 — The docks')
        await expectCount(gm.getByTestId('rewind-item'), 0)
      })

      await step('the GM regenerates the first outcome with a rewritten intention: scene 2 goes with what followed', async () => {
        await first.getByTestId('outcome-regenerate-edit').click()
        const dialog = gm.getByTestId('rewind-dialog')
        const input = dialog.getByTestId('regenerate-input')
        await expectVisible(input)
        assert.match(await input.inputValue(), new RegExp(FIRST))
        await input.fill(`I close the shutters, ${REDO}.`)
        await shoot(gm, 'regenerate-dialog-1366.png')
        await dialog.getByTestId('rewind-confirm').click()
        await expectHidden(dialog)
        await outcomeWith(alice.page, REDO)
        await expectCount(alice.page.getByTestId('feed-outcome').filter({ hasText: FIRST }), 0)
        await expectCount(alice.page.getByTestId('feed-outcome').filter({ hasText: LATER }), 0)
        await expectCount(alice.page.getByTestId('scene-divider'), 0)
      })

      await step('the GM restores the regenerate: the first story and its scene 2 divider are back, the regenerated one set aside', async () => {
        const newest = gm.getByTestId('rewind-item').filter({ hasText: 'Regenerated' })
        await newest.getByTestId('rewind-restore').click()
        await outcomeWith(alice.page, FIRST)
        await outcomeWith(alice.page, LATER)
        await expectText(alice.page.getByTestId('scene-title'), 'Scene 2 — The docks')
        await expectCount(alice.page.getByTestId('feed-outcome').filter({ hasText: REDO }), 0)
        await shoot(alice.page, 'rewind-restored-scene-1366.png')
      })
    } finally {
      await alice.context.close()
    }
  },
  { timeout: 180_000 },
)
