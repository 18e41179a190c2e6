/* NULL-terminated arrays of owned strings (argv and envp vectors). */
#pragma once

/* Free every string and the array; NULL is fine. */
void strv_free(char **v);
void strv_freep(char ***v);

/* A deep copy of v (NULL-terminated), or NULL when out of memory. */
char **strv_copy(const char *const *v);
