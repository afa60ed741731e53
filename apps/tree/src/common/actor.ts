/** Who makes a change: `created_by` / `updated_by` of the records it writes. */
export interface Actor {
  /** uuid of the caller (the token's subject) or null when the subject is not a uuid. */
  id: string | null;
}
