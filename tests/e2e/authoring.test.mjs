/**
 * Foundation: authoring through the SPA against a live server.
 *
 * "sign up; create a world, a scenario, two affiliations, a persona in both, a model through
 * the wizard against a local fake OpenAI-compatible server, an assistant; reload and find
 * them all; a second user finds none of them."
 * Plus: deep links survive a reload, validation errors sit beside their field, log out and
 * back in.
 */
import assert from 'node:assert/strict'
import {
  api,
  e2e,
  eventually,
  expectCount,
  expectHidden,
  expectPath,
  expectText,
  expectVisible,
  logIn,
  logOut,
  navigate,
  networkIdle,
  selectByText,
  signUp,
  unique,
  useLmix,
} from './harness.mjs'

const lmix = useLmix({ fakeLLM: true })

/** Open the "New <entity>" modal of a list page, let `fill` fill it, save, wait for it to close. */
async function createViaModal(page, entity, fill) {
  await page.getByTestId(`${entity}-new`).click()
  const modal = page.getByTestId(`${entity}-modal`)
  await expectVisible(modal)
  await fill(modal)
  await modal.getByTestId('form-save').click()
  await expectHidden(modal)
  await expectVisible(page.getByTestId('toast').filter({ hasText: 'created' }))
}

/** The list row of `entity` showing `text`; waits for it and returns its data-id. */
async function rowId(page, entity, text) {
  const row = page.getByTestId(`${entity}-row`).filter({ hasText: text })
  await expectCount(row, 1)
  return row.getAttribute('data-id')
}

const PAGES = {
  world: '/worlds',
  scenario: '/scenarios',
  affiliation: '/affiliations',
  persona: '/personas',
  assistant: '/assistants',
  model: '/models',
}

e2e(
  lmix,
  'authoring: a user creates a world, scenario, affiliations, persona, wizard model and assistant; they persist and stay private',
  async ({ page }) => {
    const first = await signUp(page)
    const names = {
      world: unique('World'),
      scenario: unique('Scenario'),
      affA: unique('Guild'),
      affB: unique('Order'),
      persona: unique('Alice'),
    }
    const ids = {}

    // World
    await navigate(page, 'worlds', '/worlds')
    await expectVisible(page.getByTestId('world-empty'))
    await createViaModal(page, 'world', async (modal) => {
      await modal.getByLabel('Name').fill(names.world)
      await modal.getByLabel('Description').fill('Rain, neon and old debts.')
    })
    ids.world = await rowId(page, 'world', names.world)

    // Scenario
    await navigate(page, 'scenarios', '/scenarios')
    await createViaModal(page, 'scenario', async (modal) => {
      await modal.getByLabel('Name').fill(names.scenario)
      await modal.getByLabel('Description').fill('A quiet bar, just before closing.')
    })
    ids.scenario = await rowId(page, 'scenario', names.scenario)

    // Two affiliations
    await navigate(page, 'affiliations', '/affiliations')
    for (const [name, secret] of [
      [names.affA, 'GUILD-INTERNAL-e2e'],
      [names.affB, 'ORDER-INTERNAL-e2e'],
    ]) {
      await createViaModal(page, 'affiliation', async (modal) => {
        await modal.getByLabel('Name').fill(name)
        await modal.getByLabel('Universal truth').fill(`${name} is well known in town.`)
        await modal.getByLabel('Internal truth').fill(secret)
        await modal.getByLabel('External truth').fill(`Outsiders think ${name} is harmless.`)
      })
    }
    ids.affA = await rowId(page, 'affiliation', names.affA)
    ids.affB = await rowId(page, 'affiliation', names.affB)

    // A persona in both affiliations
    await navigate(page, 'personas', '/personas')
    await createViaModal(page, 'persona', async (modal) => {
      await modal.getByLabel('Name').fill(names.persona)
      await modal.getByLabel('Universal truth').fill('A bartender.')
      await modal.getByLabel('Internal truth').fill('ALICE-SECRET-e2e')
      await modal.getByLabel('External truth').fill('Seems friendly.')
      const group = modal.getByTestId('field-affiliations')
      await group.getByLabel(names.affA).check()
      await group.getByLabel(names.affB).check()
      await expectText(group, '2 selected')
    })
    ids.persona = await rowId(page, 'persona', names.persona)
    const personaRow = page.getByTestId('persona-row').filter({ hasText: names.persona })
    await expectText(personaRow, names.affA)
    await expectText(personaRow, names.affB)

    // A model through the wizard, discovered by the browser from the fake server
    await navigate(page, 'models', '/models')
    await expectVisible(page.getByTestId('model-row').filter({ hasText: 'Offline Narrator' }))
    await page.getByTestId('models-add-wizard').click()
    const wizard = page.getByTestId('wizard-modal')
    await expectVisible(wizard)
    await wizard.getByTestId('wizard-preset-custom').click()
    await wizard.getByTestId('wizard-endpoint').fill(lmix.fakeLLMURL)
    await wizard.getByTestId('wizard-next').click()
    await expectText(wizard.getByTestId('wizard-found'), /Found\s+3\s+models/)
    await wizard.getByTestId('wizard-next').click()
    await expectVisible(wizard.getByTestId('wizard-step-select'))
    await wizard.getByTestId('wizard-model-option').filter({ hasText: 'fake-gpt' }).locator('input[type=checkbox]').check()
    await expectText(wizard.getByTestId('wizard-selected-count'), '1 of 3 selected')
    await wizard.getByTestId('wizard-submit').click()
    await expectHidden(wizard)
    ids.model = await rowId(page, 'model', 'fake-gpt')
    const model = (await api(page, 'GET', '/api/models')).find((m) => m.id === ids.model)
    assert.equal(model.model_id, 'fake-gpt')
    assert.equal(model.api_endpoint, lmix.fakeLLMURL.replace(/\/+$/, ''))
    assert.equal(model.provider, 'openai_compatible')

    // An assistant: the persona played by the wizard's model
    await navigate(page, 'assistants', '/assistants')
    await createViaModal(page, 'assistant', async (modal) => {
      await selectByText(modal.getByTestId('field-persona'), names.persona)
      await selectByText(modal.getByTestId('field-model'), model.name)
    })
    ids.assistant = await rowId(page, 'assistant', names.persona)
    await expectText(page.getByTestId('assistant-row').filter({ hasText: names.persona }), model.name)

    // Reload every page and find everything again
    const expected = [
      ['world', [names.world]],
      ['scenario', [names.scenario]],
      ['affiliation', [names.affA, names.affB]],
      ['persona', [names.persona]],
      ['model', ['fake-gpt', 'Offline Narrator']],
      ['assistant', [names.persona]],
    ]
    for (const [entity, texts] of expected) {
      await page.goto(PAGES[entity])
      await page.reload()
      await expectPath(page, PAGES[entity])
      for (const text of texts) await expectVisible(page.getByTestId(`${entity}-row`).filter({ hasText: text }))
    }
    await expectCount(page.getByTestId('assistant-row'), 1)
    await page.goto('/personas')
    const reloadedPersona = page.getByTestId('persona-row').filter({ hasText: names.persona })
    await expectText(reloadedPersona, names.affA)
    await expectText(reloadedPersona, names.affB)

    // A second user sees none of it
    await logOut(page)
    const second = await signUp(page)
    assert.notEqual(second.username, first.username)
    for (const entity of ['world', 'scenario', 'affiliation', 'persona', 'assistant']) {
      await page.goto(PAGES[entity])
      await expectVisible(page.getByTestId(`${entity}-empty`))
      await expectCount(page.getByTestId(`${entity}-row`), 0)
    }
    await page.goto('/models')
    await expectVisible(page.getByTestId('model-row').filter({ hasText: 'Offline Narrator' }))
    await expectCount(page.getByTestId('model-row'), 1)
    assert.equal(await page.getByText('fake-gpt').count(), 0)
    // …not even by id through the API.
    for (const [kind, id] of [
      ['worlds', ids.world],
      ['scenarios', ids.scenario],
      ['affiliations', ids.affA],
      ['personas', ids.persona],
      ['assistants', ids.assistant],
      ['models', ids.model],
    ]) {
      const res = await api(page, 'GET', `/api/${kind}/${id}`, undefined, { allowError: true })
      assert.equal(res.status, 404, `GET /api/${kind}/${id} as another user answered ${res.status}`)
    }
  },
  { timeout: 150_000 },
)

e2e(lmix, 'deep links survive a reload, and lead back after logging in', async ({ page }) => {
  const user = await signUp(page)
  await navigate(page, 'personas', '/personas')
  await expectVisible(page.getByRole('heading', { name: 'Personas', level: 1 }))
  await page.reload()
  await expectPath(page, '/personas')
  await expectVisible(page.getByRole('heading', { name: 'Personas', level: 1 }))
  await expectVisible(page.getByTestId('persona-empty'))
  assert.equal(await page.title(), 'Personas · LMiX')

  // Straight to a deep link in a fresh tab of the same session.
  const tab = await page.context().newPage()
  await tab.goto('/affiliations')
  await expectPath(tab, '/affiliations')
  await expectVisible(tab.getByRole('heading', { name: 'Affiliations', level: 1 }))
  await tab.close()

  // Signed out, a deep link asks for a login, then lands where it pointed.
  await logOut(page)
  await page.goto('/scenarios')
  await expectPath(page, '/login')
  assert.equal(new URL(page.url()).searchParams.get('redirect'), '/scenarios')
  await logIn(page, user, { goto: false })
  await expectPath(page, '/scenarios')
  await expectVisible(page.getByRole('heading', { name: 'Scenarios', level: 1 }))

  // An unknown path is a client-side 404 page, not a server error.
  await page.goto('/no/such/page')
  await expectText(page.getByTestId('page-not-found'), '404')
})

e2e(lmix, 'validation errors are shown beside their field', async ({ page }) => {
  await signUp(page)
  await navigate(page, 'worlds', '/worlds')
  await page.getByTestId('world-new').click()
  const modal = page.getByTestId('world-modal')
  await expectVisible(modal)
  await modal.getByTestId('form-save').click()

  const error = modal.getByTestId('error-name')
  await expectText(error, 'Give the world a name.')
  const name = modal.getByLabel('Name')
  assert.equal(await name.getAttribute('aria-invalid'), 'true')
  const errorId = await error.getAttribute('id')
  assert.equal(await name.getAttribute('aria-describedby'), errorId)
  // Beside the field: in the same field block as the "Name" label and input, right after it.
  const placement = await error.evaluate((el) => {
    const field = el.closest('.field')
    const label = field?.querySelector('label')
    const input = field?.querySelector('input')
    return {
      label: label?.textContent?.trim() ?? '',
      holdsInput: input?.id === 'world-name',
      afterInput: !!input && !!(input.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING),
    }
  })
  assert.match(placement.label, /^Name/)
  assert.ok(placement.holdsInput, 'the error is not in the Name field block')
  assert.ok(placement.afterInput, 'the error does not follow the Name input')
  // Nothing was created, and fixing the field clears the error.
  await modal.getByLabel('Name').fill('Fixed world')
  await modal.getByLabel('Description').fill('Laws of a fixed world.')
  await modal.getByTestId('form-save').click()
  await expectHidden(modal)
  await expectVisible(page.getByTestId('world-row').filter({ hasText: 'Fixed world' }))

  // A server-side error is shown beside its field too (signup with a taken username).
  const { username } = await api(page, 'GET', '/api/auth/me')
  await logOut(page)
  await page.goto('/signup')
  const form = page.getByTestId('signup-form')
  await form.getByLabel('Username').fill(username)
  await form.getByLabel('Password', { exact: true }).fill('another-Strong-pw-8812')
  await form.getByRole('button', { name: 'Sign up' }).click()
  await expectVisible(form.getByTestId('error-username'))
  await expectPath(page, '/signup')
})

e2e(lmix, 'log out and log back in', async ({ page }) => {
  const user = await signUp(page)
  const world = unique('World')
  await navigate(page, 'worlds', '/worlds')
  await createViaModal(page, 'world', async (modal) => {
    await modal.getByLabel('Name').fill(world)
    await modal.getByLabel('Description').fill('Anything goes.')
  })

  await logOut(page)
  const me = await api(page, 'GET', '/api/auth/me', undefined, { allowError: true })
  assert.ok([401, 403].includes(me.status), `GET /api/auth/me after logout answered ${me.status}`)
  await page.goto('/worlds')
  await expectPath(page, '/login')

  // A wrong password is refused with a message, and nothing opens.
  const form = page.getByTestId('login-form')
  await form.getByLabel('Username').fill(user.username)
  await form.getByLabel('Password', { exact: true }).fill('definitely-not-it-123')
  await form.getByRole('button', { name: 'Log in' }).click()
  await expectVisible(form.getByTestId('form-error'))
  await expectPath(page, '/login')

  await form.getByLabel('Password', { exact: true }).fill(user.password)
  await form.getByRole('button', { name: 'Log in' }).click()
  await expectPath(page, '/worlds')
  await expectText(page.getByTestId('user-menu'), user.username)
  await expectVisible(page.getByTestId('world-row').filter({ hasText: world }))
  await networkIdle(page)
  // The session survives a reload.
  await page.reload()
  await expectText(page.getByTestId('user-menu'), user.username)
  await eventually(async () => assert.equal((await api(page, 'GET', '/api/auth/me')).username, user.username))
})
