/** Escapes LIKE's wildcards (and the escape character itself) for `LIKE … ESCAPE '\'`. */
export const likeEscape = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);
