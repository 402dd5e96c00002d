/**
 * Persona authoring and lists as users of chat front ends expect them (issue 9):
 * a persona with a greeting, example dialogue, tags and an uploaded avatar; the greeting
 * opens a production; search, sort (newest first, the same after a reload) and the tag
 * filter; deleting a persona in use is refused in the dialog, naming the production.
 */
import assert from 'node:assert/strict'
import { api, e2e, eventually, expectCount, expectHidden, expectText, expectVisible, signUp, unique, useLmix } from './harness.mjs'

const lmix = useLmix()

// A valid 1 × 1 PNG: the browser must be able to draw the stored copy.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

e2e(lmix, 'personas: authoring fields, avatar upload, greeting, search and sort, refused delete', async ({ page, step }) => {
  await signUp(page)
  const tony = unique('Tony')
  const greeting = `*wipes a glass* ${unique('We are closed')}.`

  await step('a persona is created with greeting, example dialogue, tags and an uploaded avatar', async () => {
    await page.goto('/personas')
    await page.getByTestId('persona-new').click()
    const modal = page.getByTestId('persona-modal')
    await modal.getByLabel('Name').fill(tony)
    await modal.getByLabel('Greeting').fill(greeting)
    await modal.getByLabel('Example dialogue').fill('Tony: Sit.\nTony: Nobody leaves owing me.')
    const tags = modal.getByTestId('field-tag-input')
    await tags.fill('noir')
    await tags.press('Enter')
    await tags.fill('villain,')
    await expectCount(modal.getByTestId('tag-chip'), 2)
    await modal.getByTestId('field-avatar_file').setInputFiles({ name: 'tony.png', mimeType: 'image/png', buffer: PNG })
    await expectText(modal.getByTestId('avatar-pending'), 'tony.png')
    await modal.getByTestId('form-save').click()
    await expectHidden(modal)

    const row = page.getByTestId('persona-row').filter({ hasText: tony })
    await expectText(row.getByTestId('persona-tags'), 'villain')
    const img = row.locator('img')
    await expectVisible(img)
    assert.match(await img.getAttribute('src'), /^\/media\/avatars\/[0-9a-f]{32}\.png$/)
    await eventually(async () => assert.equal(await img.evaluate((i) => i.naturalWidth), 1))
  })

  const personas = await api(page, 'GET', '/api/personas')
  const tonyId = personas.find((p) => p.name === tony).id
  const model = (await api(page, 'GET', '/api/models'))[0]
  const alice = await api(page, 'POST', '/api/personas', { name: unique('Alice'), tags: ['therapist'] })
  const cast = [
    await api(page, 'POST', '/api/assistants', { persona: tonyId, model: model.id }),
    await api(page, 'POST', '/api/assistants', { persona: alice.id, model: model.id }),
  ]
  const world = await api(page, 'POST', '/api/worlds', { name: unique('Harbour'), description: 'Rain.' })
  const scenario = await api(page, 'POST', '/api/scenarios', { name: unique('Audit'), description: 'Books.' })
  const productionName = unique('Therapy')
  const production = await api(page, 'POST', '/api/productions', {
    name: productionName,
    world: world.id,
    scenario: scenario.id,
    assistants: cast.map((a) => a.id),
  })

  await step('the greeting is the production’s opening turn', async () => {
    await api(page, 'POST', `/api/productions/${production.id}/turns`, { assistant: cast[0].id })
    await eventually(async () => {
      const detail = await api(page, 'GET', `/api/productions/${production.id}`)
      assert.equal(detail.turns[0]?.status, 'done')
      assert.equal(detail.turns[0]?.content, greeting)
    })
  })

  const zed = await api(page, 'POST', '/api/personas', { name: unique('Zed') })

  await step('search, tag filter and sort; the newest stays first after a reload', async () => {
    await page.goto('/personas')
    const rows = page.getByTestId('persona-row')
    await expectCount(rows, 3)
    await expectText(rows.first(), zed.name) // made last: first
    await page.reload()
    await expectText(rows.first(), zed.name)
    await page.getByTestId('list-search').fill('NOBODY LEAVES') // example dialogue is not searched
    await expectVisible(page.getByTestId('persona-no-match'))
    await page.getByTestId('list-clear').click()
    await expectCount(rows, 3)
    await page.getByTestId('list-search').fill(tony.toLowerCase())
    await expectCount(rows, 1)
    await page.getByTestId('list-search').fill('')
    await page.getByTestId('list-tag').selectOption('therapist')
    await expectCount(rows, 1)
    await expectText(rows.first(), alice.name)
    await page.getByTestId('list-tag').selectOption('')
    await page.getByTestId('list-sort').selectOption('name')
    await expectText(rows.first(), alice.name)
    await page.reload()
    await expectText(rows.first(), alice.name)
    assert.equal(await page.getByTestId('list-sort').inputValue(), 'name')
  })

  await step('deleting a persona in use is refused in the dialog, naming the production', async () => {
    const row = page.getByTestId('persona-row').filter({ hasText: tony })
    await row.getByTestId('persona-delete').click()
    const dialog = page.getByTestId('confirm-dialog')
    await expectText(dialog, `Its assistant “${tony}” will be deleted too`)
    await dialog.getByTestId('confirm-ok').click()
    await expectText(dialog.getByTestId('confirm-error'), `Used by the production “${productionName}”`)
    await expectCount(dialog.getByTestId('confirm-ok'), 0)
    await dialog.getByTestId('confirm-cancel').click()
    await expectHidden(dialog)
    await page.reload()
    await expectCount(page.getByTestId('persona-row').filter({ hasText: tony }), 1)
    const detail = await api(page, 'GET', `/api/productions/${production.id}`)
    assert.equal(detail.assistants.length, 2)
  })

  await step('on a phone the list and its toolbar fit without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto('/personas')
    await expectVisible(page.getByTestId('list-search'))
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(width <= 390, `the personas page is ${width} px wide`)
  })
})
