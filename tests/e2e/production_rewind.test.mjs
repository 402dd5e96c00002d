/**
 * Rewinding a production, and its cast's state (issue 27): three offline-narrator turns,
 * each followed by a state pass; the Cast state panel shows the memories and relationships
 * they left; "Rewind to here" on the first turn shows the dry run (the two later turns,
 * the memories and changes going with them), hides the later turns and their state; "Restore
 * them" brings both back. With `LMIX_SCREENSHOTS` set, pictures at 1366 px and on a 390 px
 * phone.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { api, e2e, eventually, expectCount, expectText, expectVisible, signUp, unique, useLmix } from './harness.mjs'

const lmix = useLmix()
const CAST = ['Alice Thompson', 'Bob Marsh']
const shots = process.env.LMIX_SCREENSHOTS

async function shoot(page, name) {
  if (shots) await page.screenshot({ path: path.join(shots, name), fullPage: false })
}

const turnItems = (page) => page.getByTestId('transcript').getByTestId('turn-item')

async function doneTurns(page, n) {
  await expectCount(turnItems(page), n)
  await eventually(async () => {
    const statuses = await turnItems(page).evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))
    assert.deepEqual(statuses, Array(n).fill('done'))
  }, { timeout: 30_000, message: 'the turns did not finish' })
}

/** The production's state over REST, once every turn's state pass has ended. */
async function settledState(page, productionId, memories) {
  return eventually(async () => {
    const state = await api(page, 'GET', `/api/productions/${productionId}/state`)
    const count = state.members.reduce((sum, m) => sum + m.memories.length, 0)
    assert.equal(count, memories, `${count} memories so far`)
    return state
  }, { timeout: 30_000, message: 'the state passes did not all run' })
}

e2e(lmix, 'rewind: hide later turns and their state after a dry run, then restore them', async ({ page, step }) => {
  await signUp(page)
  let productionId

  await step('a production of two offline assistants plays three turns', async () => {
    const world = await api(page, 'POST', '/api/worlds', { name: unique('World'), description: 'A rainy harbour town.' })
    const scenario = await api(page, 'POST', '/api/scenarios', { name: unique('Scenario'), description: 'Two strangers at an inn.' })
    const offline = (await api(page, 'GET', '/api/models')).find((m) => m.api_endpoint === 'offline://narrator')
    const assistants = []
    for (const name of CAST) {
      const persona = await api(page, 'POST', '/api/personas', { name, universal_truth: `${name} is a traveller.` })
      assistants.push((await api(page, 'POST', '/api/assistants', { persona: persona.id, model: offline.id })).id)
    }
    const production = await api(page, 'POST', '/api/productions', {
      name: unique('Inn'),
      world: world.id,
      scenario: scenario.id,
      assistants,
    })
    productionId = production.id
    await page.goto(`/productions/${productionId}`)
    await expectVisible(page.locator('[data-testid="connection-status"][data-status="open"]'))
    for (let n = 1; n <= 3; n++) {
      await page.getByTestId('turn-next').click()
      await doneTurns(page, n)
    }
  })

  await step('the Cast state panel shows what the turns left', async () => {
    await settledState(page, productionId, 3 * CAST.length)
    const panel = page.getByTestId('cast-state')
    await expectCount(panel.getByTestId('cast-state-member'), 2)
    await expectText(panel, 'Remembers (3)')
    await expectText(panel, '→ ')
    await shoot(page, 'production-state-1366.png')
  })

  await step('"Rewind to here" shows the dry run, then hides the later turns and their state', async () => {
    await turnItems(page).first().getByTestId('turn-rewind').click()
    const dialog = page.getByTestId('rewind-dialog')
    await expectVisible(dialog.getByTestId('rewind-turns'))
    await expectCount(dialog.getByTestId('rewind-turns').locator('li'), 2)
    await expectText(dialog.getByTestId('rewind-state'), `${2 * CAST.length} memories`)
    await shoot(page, 'production-rewind-1366.png')
    await dialog.getByTestId('rewind-confirm').click()
    await expectCount(turnItems(page), 1)
    await expectVisible(page.getByTestId('rewound'))
    await expectText(page.getByTestId('cast-state'), 'Remembers (1)')
    const state = await api(page, 'GET', `/api/productions/${productionId}/state`)
    assert.deepEqual(state.members.map((m) => m.memories.length), [1, 1])
    // A reload shows the production as the server left it.
    await page.reload()
    await expectCount(turnItems(page), 1)
  })

  await step('"Restore them" brings the turns and their state back', async () => {
    // After the reload the banner is gone: restore with the version the server kept.
    await api(page, 'PUT', `/api/productions/${productionId}/head`, {
      turn: (await api(page, 'GET', `/api/productions/${productionId}`)).turns.at(-1).id,
    })
    await expectCount(turnItems(page), 3)
    await expectText(page.getByTestId('cast-state'), 'Remembers (3)')
    // And through the page's own button, after another rewind.
    await turnItems(page).nth(1).getByTestId('turn-rewind').click()
    await page.getByTestId('rewind-dialog').getByTestId('rewind-confirm').click()
    await expectCount(turnItems(page), 2)
    await page.getByTestId('rewind-restore').click()
    await expectCount(turnItems(page), 3)
    await expectText(page.getByTestId('cast-state'), 'Remembers (3)')
  })

  await step('on a 390 px phone: the rewind dialog and the state fit the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await turnItems(page).first().getByTestId('turn-rewind').click()
    const dialog = page.getByTestId('rewind-dialog')
    await expectVisible(dialog.getByTestId('rewind-turns'))
    const box = await dialog.getByTestId('rewind-confirm').boundingBox()
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `the confirm button spans ${box.x}..${box.x + box.width}`)
    await shoot(page, 'production-rewind-390.png')
    await dialog.getByTestId('rewind-cancel').click()
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
    await page.getByTestId('cast-state').locator('summary').click({ position: { x: 8, y: 8 } })
    await page.getByTestId('cast-state').scrollIntoViewIfNeeded()
    await shoot(page, 'production-state-390.png')
  })
}, { timeout: 180_000 })
