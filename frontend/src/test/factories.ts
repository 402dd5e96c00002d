/** Test data builders shared by the specs. */
import type {
  Affiliation,
  Assistant,
  CastMember,
  FrameView,
  FrameWindow,
  Liquid,
  Model,
  Narrative,
  Outcome,
  Persona,
  ProductionDetail,
  SceneItem,
  Seat,
  Turn,
} from '@/api/types'

const STAMP = { created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' }

export function makeTurn(over: Partial<Turn> & { id: string }): Turn {
  return {
    parent: null,
    depth: 0,
    speaker_kind: 'assistant',
    assistant: 'as1',
    speaker_name: 'Alice',
    avatar_url: '',
    content: '',
    token_count: 0,
    attempts: 0,
    status: 'done',
    error: '',
    model_id: 'offline-narrator',
    prompt_tokens: 0,
    completion_tokens: 0,
    latency_ms: 0,
    created_at: '2025-01-01T00:00:00Z',
    edited_at: null,
    ...over,
  }
}

export function makeModel(over: Partial<Model> & { id: string }): Model {
  return {
    name: 'GPT-4o',
    provider: 'openai',
    api_endpoint: 'https://api.openai.com/v1',
    has_api_key: true,
    key_unreadable: false,
    context_size_unknown: false,
    model_id: 'gpt-4o',
    config: {},
    is_default: false,
    ...STAMP,
    ...over,
  }
}

export function makeAffiliation(over: Partial<Affiliation> & { id: string; name: string }): Affiliation {
  return { universal_truth: '', internal_truth: '', external_truth: '', ...STAMP, ...over }
}

export function makePersona(over: Partial<Persona> & { id: string; name: string }): Persona {
  return {
    avatar_url: '',
    style: '',
    greeting: '',
    example_dialogue: '',
    tags: [],
    universal_truth: '',
    internal_truth: '',
    external_truth: '',
    known_as: '',
    affiliations: [],
    covert_affiliations: [],
    imported: {},
    ...STAMP,
    ...over,
  }
}

export function makeAssistant(over: Partial<Assistant> & { id: string; display_name: string }): Assistant {
  return {
    persona: 'p1',
    model: 'm1',
    name: '',
    config_override: {},
    system_prompt_template: '',
    persona_name: over.display_name,
    avatar_url: '',
    model_name: 'Offline Narrator',
    ...STAMP,
    ...over,
  }
}

export function makeCast(id: string, name: string): CastMember {
  return { id, display_name: name, persona: `persona-${id}`, persona_name: name, avatar_url: '', model_name: 'Offline Narrator', model_id: 'narrator', provider: 'offline' }
}

export function makeDetail(over: Partial<ProductionDetail> = {}): ProductionDetail {
  return {
    id: 'prod1',
    name: 'Therapy Session',
    world: 'w1',
    scenario: 's1',
    world_name: 'Modern NYC',
    scenario_name: 'First Therapy Session',
    assistants: ['as1', 'as2'],
    show_directive: false,
    auto_reply: false,
    turn_count: 0,
    cast: [makeCast('as1', 'Alice'), makeCast('as2', 'Bob')],
    turns: [],
    head: null,
    autoplay_remaining: 0,
    event_seq: 0,
    ...STAMP,
    ...over,
  }
}

// ---------- frames ----------

/** Seats of a three-character frame: Alice and Bob played by people, Tony by an AI. */
export const SEATS = { alice: 'seat-a', bob: 'seat-b', tony: 'seat-t' } as const

export function makeSeat(over: Partial<Seat> & { id: string; name: string }): Seat {
  return { persona: `p-${over.id}`, controller: 'human', user: 2, player: null, assistant: null, ai_reacts: 'addressed', avatar_url: '', ...over }
}

export function makeLiquid(over: Partial<Liquid> & { id: string }): Liquid {
  return {
    seat: SEATS.alice,
    author: 2,
    face: 'player',
    result: null,
    status: 'submitted',
    revision: 1,
    submitted_at: '2025-01-01T00:00:01Z',
    committed_at: null,
    pscale: null,
    window_seconds: null,
    interruptive: false,
    targets: [],
    capable: null,
    capable_reason: '',
    analysis_source: '',
    analysis_note: '',
    held: false,
    content: 'I open the door.',
    refined: '',
    ...over,
  }
}

export function makeOutcome(over: Partial<Outcome> & { id: string; seq: number }): Outcome {
  return {
    seat: SEATS.alice,
    actions_resolved: [{ seat: SEATS.alice, action: 'opens the door', result: 'success' }],
    world_facts: ['The door is open.'],
    interrupts: [],
    witnesses: [SEATS.alice, SEATS.bob],
    held: false,
    released_at: null,
    edited_at: null,
    created_at: '2025-01-01T00:00:10Z',
    ...over,
  }
}

export function makeNarrative(over: Partial<Narrative> & { id: string }): Narrative {
  return {
    seat: SEATS.alice,
    text: '',
    token_count: 0,
    outcome_ids: [],
    liquid_ids: [],
    trigger: 'expiry',
    pscale: -1,
    status: 'streaming',
    created_at: '2025-01-01T00:00:11Z',
    shared: false,
    user: null,
    ...over,
  }
}

export function makeWindow(over: Partial<FrameWindow> & { id: string }): FrameWindow {
  return {
    seat: SEATS.alice,
    status: 'open',
    pscale: -1,
    opened_at: '2025-01-01T00:00:05Z',
    expires_at: '2025-01-01T00:00:35Z',
    remaining_seconds: null,
    ...over,
  }
}

/** Alice's view (a player) unless `over` says otherwise. */
export function makeFrameView(over: Partial<FrameView> = {}): FrameView {
  return {
    id: 'frame1',
    production: 'prod1',
    name: 'Night at the docks',
    status: 'open',
    mode: 'per_character',
    tempo: 1,
    liquid_visibility: 'all',
    player_faces: [],
    leak_guard: 'hold',
    second_opinion: false,
    seq: 0,
    is_gm: false,
    my_seats: [SEATS.alice],
    invite_code: null,
    spectator_code: null,
    liquid_flags: null,
    seats: [
      makeSeat({ id: SEATS.alice, name: 'Alice', user: 2 }),
      makeSeat({ id: SEATS.bob, name: 'Bob', user: 3 }),
      makeSeat({ id: SEATS.tony, name: 'Tony', controller: 'ai', user: null, assistant: 'as-t' }),
    ],
    liquid: [],
    outcomes: [],
    narratives: [],
    narrators: {},
    windows: [],
    talk: [],
    content: [],
    ...over,
  }
}

export function makeScene(over: Partial<SceneItem> & { number: number }): SceneItem {
  return {
    id: `scene${over.number}`,
    title: '',
    location: '',
    opened_seq: 0,
    closed_seq: null,
    closed_reason: '',
    status: 'open',
    summary_status: 'none',
    opened_at: '2025-01-01T00:00:00Z',
    closed_at: null,
    summary: '',
    summaries: [],
    ...over,
  }
}
