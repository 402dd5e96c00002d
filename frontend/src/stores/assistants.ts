/** Assistants store. */
import { defineStore } from 'pinia'
import { assistantsApi } from '@/api/assistants'
import { useCollection } from './collection'

export const useAssistantsStore = defineStore('assistants', () => useCollection(assistantsApi))
