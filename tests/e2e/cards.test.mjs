/**
 * Character cards in the browser (issue 27): a V3 PNG card imported from the Personas page
 * becomes a persona with its image as the avatar; "Export card" downloads it again as a PNG
 * whose card imports to the same persona; a PNG without a card is refused with the
 * server's reason shown, and nothing is added.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { REPO, api, e2e, eventually, expectCount, expectText, expectVisible, signUp, useLmix } from './harness.mjs'

const lmix = useLmix()
const FIXTURES = path.join(REPO, 'tests', 'authoring', 'fixtures')

e2e(lmix, 'cards: import a PNG card, export it, import the export; a card-less PNG is refused', async ({ page, step }) => {
  await signUp(page)
  const file = page.getByTestId('persona-import-file')
  const rows = page.getByTestId('persona-row')

  await step('a V3 PNG card imports as a persona with its image as the avatar', async () => {
    await page.goto('/personas')
    await file.setInputFiles(path.join(FIXTURES, 'mira.v3.png'))
    await expectCount(rows, 1)
    const row = rows.first()
    await expectText(row, 'Mira Vance')
    await expectText(row.getByTestId('known-as'), 'the Lamplighter')
    const img = row.locator('img')
    await expectVisible(img)
    await eventually(async () => assert.equal(await img.evaluate((i) => i.naturalWidth), 8))
    // What the card kept shows in the edit form, its system prompt marked as prompt text.
    await row.getByTestId('persona-edit').click()
    const kept = page.getByTestId('persona-modal').getByTestId('persona-imported')
    await kept.locator('summary').click()
    await expectText(kept, 'Works best in slow-burn mystery scenes.')
    await expectText(kept, 'in its prompt')
    if (process.env.LMIX_SCREENSHOTS) await kept.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'cards-kept.png') })
    await page.getByTestId('form-cancel').click()
  })

  await step('"Export card" downloads a V3 PNG that imports to the same persona', async () => {
    const row = rows.first()
    await row.getByTestId('persona-export').locator('summary').click()
    await expectVisible(row.getByTestId('persona-export-v2-json'))
    // With LMIX_SCREENSHOTS set to a folder (as frames.test.mjs), a picture of the menu.
    if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'cards-export.png') })
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByTestId('persona-export-v3-png').click(),
    ])
    assert.match(download.suggestedFilename(), /^Mira_Vance\.v3\.png$/)
    const buffer = await readFile(await download.path())
    await file.setInputFiles({ name: 'again.png', mimeType: 'image/png', buffer })
    await expectCount(rows, 2)
    const [first, second] = (await api(page, 'GET', '/api/personas')).map((p) => ({
      ...p,
      id: '',
      avatar_url: '',
      created_at: '',
      updated_at: '',
    }))
    assert.deepEqual(first, second)
  })

  await step('a PNG without a card is refused with the reason, and nothing is added', async () => {
    await file.setInputFiles(path.join(FIXTURES, 'plain.png'))
    const error = page.getByTestId('persona-import-error')
    await expectText(error, 'no character card')
    await expectText(error, 'plain.png')
    await expectCount(rows, 2)
    if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'cards-refused.png') })
  })

  await step('on a 390 px phone the refusal and the export menu stay on screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    const box = await page.getByTestId('persona-import-error').boundingBox()
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `the refusal spans ${box.x}..${box.x + box.width}`)
    await page.getByTestId('persona-import-error').getByRole('button', { name: 'Dismiss' }).click()
    await rows.first().getByTestId('persona-export').locator('summary').click()
    const link = await rows.first().getByTestId('persona-export-v2-json').boundingBox()
    assert.ok(link.x >= 0 && link.x + link.width <= 390, `the menu spans ${link.x}..${link.x + link.width}`)
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
    if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'cards-phone.png') })
  })
})
