/**
 * The author and designer faces (issue 28, "Faces") in three browsers: the GM opens the
 * author face to players in the frame's settings; a player switches their composer to
 * Author and describes a place, which shows in their feed as writing (not an intention)
 * until it is added, then in the World panel of the GM's and the other player's pages; the
 * GM writes as a designer from their page, and the skill it makes is in the GM's Skills
 * dialog as the frame's own.
 */
import assert from 'node:assert/strict'
import { e2e, expectCount, expectText, expectVisible, signUp, useLmix } from './harness.mjs'
import { createCast, joinSeat, mark, openBrowser, shootingStep, startFrame } from './frame_setup.mjs'

const lmix = useLmix()

e2e(lmix, 'faces: a player adds a place as an author, everyone’s World panel shows it; the GM writes a skill as a designer', async ({ page: gm, suite, step: harnessStep }) => {
  const people = {}
  const step = shootingStep(suite, harnessStep, people)
  const cast = [{ name: 'Alice Thompson' }, { name: 'Bob Wilson' }, { name: 'Tony Rosetti' }]
  const place = mark('FOG')
  let frameId

  try {
    await signUp(gm)
    const { production } = await createCast(gm, cast)
    const view = await startFrame(gm, production, cast, { name: 'Faces night', open_seats: [cast[0].persona, cast[1].persona], tempo: 0.4 })
    frameId = view.id

    const ready = await step('the GM opens the author face to players in the settings', async () => {
      await gm.goto(`/frames/${frameId}/gm`)
      await gm.getByTestId('settings-toggle').click()
      await gm.getByTestId('settings-face-author').check()
      await gm.getByTestId('settings-save').click()
      await expectText(gm.getByText('Frame settings saved.').first(), 'Frame settings saved.')
      const stored = await gm.evaluate(async (id) => (await (await fetch(`/api/frames/${id}`)).json()).player_faces, frameId)
      assert.deepEqual(stored, ['author'])
    })
    if (!ready) return

    for (const [who, member] of [
      ['alice', cast[0]],
      ['bob', cast[1]],
    ]) {
      people[who] = await openBrowser(suite)
      await signUp(people[who].page)
      await joinSeat(people[who].page, view.invite_code, member.seat)
      await people[who].page.goto(`/frames/${frameId}`)
      await expectVisible(people[who].page.getByTestId('composer-form'))
    }
    const alice = people.alice.page
    const bob = people.bob.page

    await step('a player switches to Author and describes a place: it is added to the world for everyone', async () => {
      await expectVisible(alice.getByTestId('face-switch'))
      await expectCount(alice.getByTestId('face-designer'), 0) // not opened to players
      await alice.getByTestId('face-author').click()
      const input = alice.getByTestId('composer-input')
      assert.match(await input.getAttribute('placeholder'), /^Describe a place, a person, a thing…/)
      await expectVisible(alice.getByTestId('face-hint'))
      await input.fill(`A quiet harbour called Greyhaven, where the fog never lifts. ${place}`)
      await expectText(alice.getByTestId('composer-submit'), 'Add to the world')
      await alice.getByTestId('composer-submit').click()
      const writing = alice.getByTestId('feed-writing').filter({ hasText: place })
      await expectVisible(writing)
      assert.equal(await writing.getAttribute('data-face'), 'author')
      await expectText(writing.getByTestId('writing-result'), 'Added to the world: Greyhaven')
      await expectCount(alice.getByTestId('liquid-card').filter({ hasText: place }), 0) // no intention
      for (const page of [gm, bob, alice]) {
        const entry = page.getByTestId('content-entry').filter({ hasText: 'Greyhaven' })
        await expectVisible(entry)
        await expectText(entry, place)
      }
      await expectText(gm.getByTestId('feed-writing').filter({ hasText: place }).getByTestId('writing-label'), /Alice Thompson writes as author/i) // the label is set in capitals
    })

    await step('the GM writes as a designer: the skill is in the Skills dialog as the frame’s', async () => {
      const box = gm.getByTestId('gm-faces')
      await box.getByTestId('face-designer').click()
      const input = box.getByTestId('composer-input')
      assert.match(await input.getAttribute('placeholder'), /^Write an instruction for the storyteller…/)
      await input.fill('Keep the tone wry and brief, with salt in every line. category: tone')
      await box.getByTestId('composer-submit').click()
      const writing = gm.getByTestId('feed-writing').filter({ hasText: 'salt in every line' })
      await expectText(writing.getByTestId('writing-result'), 'Skill added: Keep the tone wry and brief, with salt in every line')
      await gm.getByTestId('gm-skills-open').click()
      const dialog = gm.getByTestId('gm-skills-dialog')
      await dialog.getByTestId('skills-face-player').click()
      const row = dialog.locator('[data-testid="skill-row"][data-category="tone"][data-scope="frame"]')
      await expectVisible(row)
      await expectText(row, 'salt in every line')
      // The other player's feed shows the GM's writing as such, done.
      await expectText(bob.getByTestId('feed-writing').filter({ hasText: 'salt in every line' }).getByTestId('writing-label'), /The GM writes as designer/i)
    })
  } finally {
    for (const person of Object.values(people)) await person.context.close().catch(() => {})
  }
})
