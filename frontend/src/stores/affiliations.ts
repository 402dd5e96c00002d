/** Affiliations store. */
import { defineStore } from 'pinia'
import { affiliationsApi } from '@/api/affiliations'
import { useCollection } from './collection'

export const useAffiliationsStore = defineStore('affiliations', () => useCollection(affiliationsApi))
