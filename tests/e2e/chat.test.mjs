/**
 * What users of chat front ends expect from a production's conversation: speak as a
 * character, Markdown shown safely, edit and delete turns (asked what to do with the later
 * ones), continue the last turn, a drafted line ("impersonate"), auto-reply, a word on the
 * turns another version hides, and all of it on a phone.
 *
 * Two personas on the offline narrator, set up through the API; everything else through
 * the page. Each persona's internal truth holds a marker: a line drafted for Bob never
 * shows Alice's.
 */
import assert from 'node:assert/strict'
import { api, e2e, eventually, expectCount, expectHidden, expectText, expectVisible, networkIdle, signUp, unique, useLmix } from './harness.mjs'

const lmix = useLmix()

const turnItems = (page) => page.getByTestId('transcript').getByTestId('turn-item')
const turnById = (page, id) => page.locator(`[data-testid="turn-item"][data-turn-id="${id}"]`)

async function waitDone(turn) {
  await eventually(
    async () => {
      const status = await turn.getAttribute('data-status')
      if (status === 'failed') throw Object.assign(new Error('the turn failed'), { fatal: true })
      if (status !== 'done') throw new Error(`status is ${status}`)
    },
    { timeout: 30_000, message: 'the turn did not finish' },
  )
  await expectCount(turn.getByTestId('turn-typing'), 0)
}

async function send(page, text, speaker = '') {
  await page.getByTestId('speak-as').selectOption(speaker)
  await page.getByTestId('director-input').fill(text)
  await page.getByTestId('director-send').click()
}

e2e(
  lmix,
  'chat: speak as a character, Markdown, edit, delete, continue, draft a line, auto-reply',
  async ({ page, step }) => {
    await signUp(page)
    const personas = {}
    let productionId

    await step('set up two characters on the offline narrator', async () => {
      const world = await api(page, 'POST', '/api/worlds', { name: unique('World'), description: 'A lighthouse on a cliff.' })
      const scenario = await api(page, 'POST', '/api/scenarios', { name: unique('Scenario'), description: 'A storm traps two keepers inside.' })
      const offline = (await api(page, 'GET', '/api/models')).find((m) => m.api_endpoint === 'offline://narrator')
      const assistants = []
      for (const [key, name] of [
        ['alice', 'Alice Keeper'],
        ['bob', 'Bob Lantern'],
      ]) {
        const persona = await api(page, 'POST', '/api/personas', {
          name,
          universal_truth: `${name} keeps the light.`,
          internal_truth: `${key.toUpperCase()}-CHAT-SECRET: ${name} fears the dark.`,
        })
        personas[key] = persona
        assistants.push((await api(page, 'POST', '/api/assistants', { persona: persona.id, model: offline.id })).id)
      }
      const production = await api(page, 'POST', '/api/productions', {
        name: unique('Storm'),
        world: world.id,
        scenario: scenario.id,
        assistants,
        show_directive: true,
      })
      productionId = production.id
      await page.goto(`/productions/${productionId}`)
      await expectVisible(page.locator('[data-testid="connection-status"][data-status="open"]'))
    })

    await step('speak as Alice: Markdown renders, typed HTML stays text', async () => {
      await send(page, '*trims the wick* "Hold the **door**, Bob." <b>not bold</b>', personas.alice.id)
      const turn = turnItems(page).first()
      await expectText(turn.getByTestId('turn-speaker'), 'Alice Keeper')
      await expectVisible(turn.getByTestId('turn-written'))
      const content = turn.getByTestId('turn-content')
      await expectText(content.locator('em').first(), 'trims the wick')
      await expectText(content.locator('strong'), 'door')
      await expectText(content.locator('.rp-speech'), '"Hold the door, Bob."')
      await expectText(content, '<b>not bold</b>')
      await expectCount(content.locator('b'), 0)
    })

    await step('a director note with a typo is edited in place, and stays edited after a reload', async () => {
      await send(page, 'The wind howls lodly.')
      const note = turnItems(page).nth(1)
      await expectText(note.getByTestId('turn-content'), 'lodly')
      await note.getByTestId('turn-edit').click()
      await note.getByTestId('turn-edit-input').fill('The wind howls loudly.')
      await note.getByTestId('turn-edit-save').click()
      await expectHidden(note.getByTestId('turn-editor'))
      await expectText(note.getByTestId('turn-content'), 'howls loudly.')
      await expectVisible(note.getByTestId('turn-edited'))
      await networkIdle(page)
      await page.reload()
      await expectText(turnItems(page).nth(1).getByTestId('turn-content'), 'howls loudly.')
    })

    await step('with auto-reply on, the next speaker answers a note by itself', async () => {
      await page.getByTestId('auto-reply').check()
      await eventually(async () => {
        const detail = await api(page, 'GET', `/api/productions/${productionId}`)
        if (!detail.auto_reply) throw new Error('auto-reply is not saved')
      })
      await send(page, 'Thunder shakes the tower.')
      await expectCount(turnItems(page), 4)
      const reply = turnItems(page).nth(3)
      await waitDone(reply)
      await expectText(reply.getByTestId('turn-speaker'), 'Bob Lantern') // Alice spoke last
      await page.getByTestId('auto-reply').uncheck()
      await networkIdle(page)
    })

    await step('continue the last turn: its text goes on from where it ended', async () => {
      const last = turnItems(page).nth(3)
      const before = (await last.getByTestId('turn-content').innerText()).trim()
      await last.getByTestId('turn-continue').click()
      await eventually(async () => {
        const now = (await last.getByTestId('turn-content').innerText()).trim()
        if (!(now.length > before.length + 10 && now.startsWith(before.slice(0, 40)))) throw new Error('not longer yet')
      })
      await waitDone(last)
      await expectCount(turnItems(page), 4)
    })

    await step("draft Bob's line, edit it, send it: nothing of Alice's secret in it", async () => {
      await page.getByTestId('speak-as').selectOption(personas.bob.id)
      await page.getByTestId('impersonate').click()
      const box = page.getByTestId('director-input')
      await eventually(async () => {
        if ((await box.inputValue()).length < 10 || !(await box.isEditable())) throw new Error('no draft yet')
      })
      const draft = await box.inputValue()
      assert.ok(!draft.includes('ALICE-CHAT-SECRET'), `the draft holds Alice's secret: ${draft}`)
      await box.fill(`${draft} (edited)`)
      await page.getByTestId('director-send').click()
      const sent = turnItems(page).nth(4)
      await expectText(sent.getByTestId('turn-speaker'), 'Bob Lantern')
      await expectText(sent.getByTestId('turn-content'), '(edited)')
      await expectVisible(sent.getByTestId('turn-written'))
    })

    await step('regenerating a middle turn says where the later turns went', async () => {
      const reply = turnItems(page).nth(3)
      const replyId = await reply.getAttribute('data-turn-id')
      await reply.getByTestId('turn-regenerate').click()
      await expectCount(turnItems(page), 4)
      const fresh = turnItems(page).nth(3)
      await eventually(async () => {
        if ((await fresh.getAttribute('data-turn-id')) === replyId) throw new Error('still the old version')
      })
      await waitDone(fresh)
      await expectText(fresh.getByTestId('turn-elsewhere'), 'version 1 goes on for 1 more turn')
      await fresh.getByTestId('sibling-prev').click()
      await expectCount(turnItems(page), 5)
      await expectCount(turnById(page, replyId), 1)
    })

    await step('delete a turn with later ones: asked, then only it goes; then a whole branch', async () => {
      const before = await api(page, 'GET', `/api/productions/${productionId}`)
      const note = turnItems(page).nth(1)
      const noteId = await note.getAttribute('data-turn-id')
      await note.getByTestId('turn-delete').click()
      const dialog = page.getByTestId('delete-turn-dialog')
      await expectText(dialog, 'later turns follow')
      await dialog.getByTestId('delete-turn-keep').click()
      await expectHidden(dialog)
      await expectCount(turnById(page, noteId), 0)
      await expectCount(turnItems(page), 4)
      let after = await api(page, 'GET', `/api/productions/${productionId}`)
      assert.equal(after.turns.length, before.turns.length - 1)

      // The last two turns (the reply and Bob's line) go together.
      const reply = turnItems(page).nth(2)
      const replyId = await reply.getAttribute('data-turn-id')
      await reply.getByTestId('turn-delete').click()
      await dialog.getByTestId('delete-turn-branch').click()
      await expectHidden(dialog)
      await expectCount(turnById(page, replyId), 0)
      // What is left of the conversation: up to the thunder, then the other version.
      await expectCount(turnItems(page), 3)
      after = await api(page, 'GET', `/api/productions/${productionId}`)
      assert.equal(after.turns.length, before.turns.length - 3)
    })

    await step('on a 390 px phone the conversation and its composer never scroll sideways', async () => {
      await page.setViewportSize({ width: 390, height: 844 })
      await page.reload()
      await expectCount(turnItems(page), 3)
      await expectVisible(page.getByTestId('director-send'))
      await expectVisible(turnItems(page).first().getByTestId('turn-delete'))
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`)
      // The cast and its controls leave the conversation most of the screen.
      const controls = await page.getByRole('complementary', { name: 'Controls' }).boundingBox()
      assert.ok(controls && controls.height <= 844 / 4, `the controls take ${controls?.height}px of 844`)
      await expectVisible(page.getByTestId('cast-play').first())
    })
  },
  { timeout: 180_000 },
)
