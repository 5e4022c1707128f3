/* A kept stack for a CLONE_VM child (child_stack.h). */
#include "lib/child_stack.h"

#include <sanitizer/asan_interface.h>
#include <stddef.h>
#include <sys/mman.h>

char *child_stack_top(char **kept, size_t size)
{
	if (!*kept) {
		char *mapped = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (mapped == MAP_FAILED)
			return NULL;
		*kept = mapped; /* the caller's, until the process ends */
	}
	/* Under ASan the frames of the last child, which never returned, left
	 * their redzones poisoned in the shadow: the next child would trip
	 * over them. (Nothing otherwise.) */
	ASAN_UNPOISON_MEMORY_REGION(*kept, size);
	return *kept + size;
}
