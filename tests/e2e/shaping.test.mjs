/**
 * What the author and designer faces change in play (issue 28), on the offline narrator:
 * the GM, as an author, adds a location; the player's World panel shows it, and the
 * player's next narrative pass has it in its directive (THE WORLD AS IT STANDS, on the GM's
 * pass list). The GM, as a designer, adds a skill; the next pass's directive holds it and
 * says so ("Shaped by", the frame's). With LMIX_SCREENSHOTS set, pictures of the composer's
 * face switch and the World panel, on a desktop and a 390 px phone.
 */
import assert from 'node:assert/strict'
import { api, e2e, expectText, expectVisible, signUp, useLmix } from './harness.mjs'
import { commit, createCast, joinSeat, mark, narrativeDone, openBrowser, shoot, shootingStep, startFrame, writeIntention } from './frame_setup.mjs'

const lmix = useLmix()
const PHONE = { width: 390, height: 844 }
const DESKTOP = { width: 1366, height: 900 }

e2e(lmix, 'shaping: an author’s location and a designer’s skill reach the next pass’s directive', async ({ page: gm, suite, step: harnessStep }) => {
  const people = {}
  const step = shootingStep(suite, harnessStep, people)
  const cast = [{ name: 'Alice Thompson' }, { name: 'Tony Rosetti' }]
  const place = mark('LIGHT')
  const tone = mark('KELP')
  let frameId

  try {
    await signUp(gm)
    const { production } = await createCast(gm, cast)
    const view = await startFrame(gm, production, cast, { name: 'Lighthouse night', open_seats: [cast[0].persona], tempo: 0.1 })
    frameId = view.id
    // Players may write as authors too: the player's composer shows the face switch.
    await api(gm, 'PATCH', `/api/frames/${frameId}`, { player_faces: ['author'] })
    people.alice = await openBrowser(suite)
    const alice = people.alice.page
    await signUp(alice)
    await joinSeat(alice, view.invite_code, cast[0].seat)
    await alice.goto(`/frames/${frameId}`)
    await expectVisible(alice.getByTestId('composer-form'))
    await gm.goto(`/frames/${frameId}/gm`)
    const box = gm.getByTestId('gm-faces')

    await step('the GM, as an author, adds a location: the player’s World panel shows it', async () => {
      await box.getByTestId('face-author').click()
      await box.getByTestId('composer-input').fill(`A lighthouse called ${place} Lighthouse, its lamp long dark, on the harbour’s point.`)
      await box.getByTestId('composer-submit').click()
      const writing = gm.getByTestId('feed-writing').filter({ hasText: place })
      await expectText(writing.getByTestId('writing-result'), new RegExp(`Added to the world: ${place}`))
      const entry = alice.getByTestId('content-entry').filter({ hasText: place })
      await expectVisible(entry)
      await expectText(entry.locator('.badge').first(), 'Location')
      await entry.scrollIntoViewIfNeeded()
      await shoot(alice, 'world-desktop.png')
      await alice.setViewportSize(PHONE)
      await alice.getByTestId('table-toggle').click() // on a phone the table folds away
      await entry.scrollIntoViewIfNeeded()
      await shoot(alice, 'world-phone.png')
      await alice.getByTestId('table-toggle').click()
      await alice.setViewportSize(DESKTOP)
    })

    await step('the GM, as a designer, adds a skill', async () => {
      await box.getByTestId('face-designer').click()
      await box.getByTestId('composer-input').fill(`Let every line smell of kelp and salt ${tone}. category: tone`)
      await box.getByTestId('composer-submit').click()
      await expectText(gm.getByTestId('feed-writing').filter({ hasText: tone }).getByTestId('writing-result'), /Skill added/)
    })

    await step('the composer’s face switch, on a desktop and a phone', async () => {
      await expectVisible(alice.getByTestId('face-switch'))
      await alice.getByTestId('face-author').click()
      await expectVisible(alice.getByTestId('face-hint'))
      await alice.getByTestId('face-switch').scrollIntoViewIfNeeded()
      await shoot(alice, 'faces-composer-desktop.png')
      await alice.setViewportSize(PHONE)
      await alice.getByTestId('face-switch').scrollIntoViewIfNeeded()
      await shoot(alice, 'faces-composer-phone.png')
      await alice.setViewportSize(DESKTOP)
      await alice.getByTestId('face-player').click()
    })

    await step('the player acts at the lighthouse: the pass’s directive holds the location and the skill, “Shaped by” it', async () => {
      const text = `I climb the stairs of ${place} Lighthouse.`
      await commit(alice, await writeIntention(alice, text))
      await narrativeDone(alice, cast[0].seat)
      await gm.reload()
      const pass = gm.locator('[data-testid="pass-item"][data-status="done"]').filter({ hasText: 'medium' }).first()
      await expectVisible(pass)
      await pass.getByTestId('pass-messages').locator('summary').click()
      const messages = pass.getByTestId('pass-messages')
      await expectText(messages, new RegExp(`THE WORLD AS IT STANDS[\\s\\S]*${place} Lighthouse`))
      await expectText(messages, new RegExp(tone))
      const shaped = messages.getByTestId('pass-skills').first()
      await expectVisible(shaped.locator('[data-scope="frame"]'))
      assert.match(await shaped.innerText(), /Shaped by/)
    })
  } finally {
    for (const person of Object.values(people)) await person.context.close().catch(() => {})
  }
})
