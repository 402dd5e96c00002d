/** Personas store. */
import { defineStore } from 'pinia'
import { personasApi } from '@/api/personas'
import { useCollection } from './collection'

export const usePersonasStore = defineStore('personas', () => useCollection(personasApi))
