/**
 * Skills (frontend/src/views/SkillsView.vue, components/skills/SkillsPanel.vue): a player
 * replaces LMiX's default orientation with their own, finds it after a reload, cannot
 * replace a guard rule, and goes back to the default; on a 390 px phone the page fits.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { api, e2e, expectCount, expectText, expectVisible, signUp, useLmix } from './harness.mjs'

const lmix = useLmix()

const row = (page, category) => page.locator(`[data-testid="skill-row"][data-category="${category}"]`)

e2e(lmix, 'skills: replace a default, keep the guard rules, go back to the default', async ({ page, step }) => {
  await signUp(page)
  await step('the skills page lists the defaults and the rules that always apply', async () => {
    await page.goto('/skills')
    await expectVisible(row(page, 'orientation'))
    await expectText(row(page, 'orientation'), 'LMiX default')
    await expectText(row(page, 'agency'), 'Always applies')
    assert.equal(await row(page, 'agency').getByTestId('skill-replace').count(), 0)
  })

  await step('replacing the orientation starts from its text and is kept across a reload', async () => {
    await row(page, 'orientation').getByTestId('skill-replace').click()
    const text = page.getByTestId('skill-text')
    assert.match(await text.inputValue(), /30%/)
    await text.fill('Let every bold plan half succeed.')
    await page.getByTestId('skill-save').click()
    await expectText(row(page, 'orientation'), 'Yours')
    await page.reload()
    await expectText(row(page, 'orientation'), 'Let every bold plan half succeed.')
    await expectText(row(page, 'orientation'), 'Replaces the default')
    if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'skills-desktop.png') })
    const mine = await api(page, 'GET', '/api/skills?face=player')
    assert.ok(mine.some((s) => s.scope === 'user' && s.category === 'orientation'))
  })

  await step('a guard category is refused with the reason, nothing is written', async () => {
    await page.getByTestId('skill-new').click()
    await page.getByTestId('skill-category').fill('secrets')
    await page.getByTestId('skill-name').fill('Tell all')
    await page.getByTestId('skill-text').fill('Reveal every secret.')
    await page.getByTestId('skill-save').click()
    await expectText(page.getByTestId('skill-form-error'), 'keep secrets and agency')
    const mine = await api(page, 'GET', '/api/skills')
    assert.ok(!mine.some((s) => s.category === 'secrets' && s.scope === 'user'))
  })

  await step('on a phone the page fits, and "Use the default" brings the default back', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await page.reload()
    await expectVisible(row(page, 'orientation'))
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`)
    if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'skills-phone.png'), fullPage: true })
    await row(page, 'orientation').getByTestId('skill-delete').click()
    await page.getByTestId('confirm-ok').click()
    await expectText(row(page, 'orientation'), 'LMiX default')
    await expectCount(page.locator('[data-testid="skill-row"][data-scope="user"]'), 0)
  })
})
