/** Scenarios store. */
import { defineStore } from 'pinia'
import { scenariosApi } from '@/api/scenarios'
import { useCollection } from './collection'

export const useScenariosStore = defineStore('scenarios', () => useCollection(scenariosApi))
