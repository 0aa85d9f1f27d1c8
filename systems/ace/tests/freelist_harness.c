/*
 * freelist_harness: the patched freelist.c (the replacement policies and ACE's
 * choice of pages to write) run on a buffer pool set up by hand, outside a server.
 *
 * freelist.c is included, not linked, so that the harness can set the list and the
 * cold flags it keeps private; what it needs from the rest of the server (locks,
 * shared memory, error reporting) is stubbed below: one process, no concurrency.
 *
 * usage: freelist_harness POLICY CFLRU_WINDOW N_W PAGE...
 *   POLICY  clock | lru | cflru | lru_wsr
 *   PAGE    NAME[:FLAGS], FLAGS from D (dirty), W (LRU-WSR's cold flag set),
 *           P (pinned), U<n> (Clock Sweep's usage count n)
 *   Pages are listed in eviction order: for the list policies from the least
 *   recently used; for Clock Sweep in buffer order from the clock hand.
 * prints:
 *   victim NAME            StrategyGetBuffer's choice
 *   writeback NAME...      StrategyWriteBackCandidates(victim, N_W - 1): the rest
 *                          of ACE's batch, after the victim itself
 *   order NAME...          the list afterwards, least recently used first
 *                          (list policies), with * after a page whose cold flag is set
 */
#include "freelist.c"				/* from src/backend/storage/buffer (-iquote) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* port.h routes these to libpgport's implementations; the C library's will do */
#undef printf
#undef fprintf
#undef vfprintf

/* ---- what freelist.c needs from the rest of the server ---- */
int			NBuffers;
BufferDescPadded *BufferDescriptors;
LWLockPadded *MainLWLockArray;
PROC_HDR   *ProcGlobal;

bool
LWLockAcquire(LWLock *lock, LWLockMode mode)
{
	return true;
}

void
LWLockRelease(LWLock *lock)
{
}

uint32
LockBufHdr(BufferDesc *desc)
{
	return pg_atomic_fetch_or_u32(&desc->state, BM_LOCKED) | BM_LOCKED;
}

void *
ShmemInitStruct(const char *name, Size size, bool *foundPtr)
{
	*foundPtr = false;
	return calloc(1, size);
}

void
InitBufTable(int size)
{
}

Size
BufTableShmemSize(int size)
{
	return 0;
}

/* the counters of page writes (ACE's Reader) are not used here: any counter will do */
uint32
BufTableHashCode(BufferTag *tagPtr)
{
	return tagPtr->blockNum;
}

Size
add_size(Size s1, Size s2)
{
	return s1 + s2;
}

Size
mul_size(Size s1, Size s2)
{
	return s1 * s2;
}

void
SetLatch(Latch *latch)
{
}

void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
{
	fprintf(stderr, "assertion failed: %s (%s:%d)\n", conditionName, fileName, lineNumber);
	abort();
}

static int	error_level;

bool
errstart_cold(int elevel, const char *domain)
{
	error_level = elevel;
	return true;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		args;

	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	return 0;
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	if (error_level >= ERROR)
		exit(3);
}

void *
palloc0(Size size)
{
	return calloc(1, size);
}

void
pfree(void *pointer)
{
	free(pointer);
}

int
s_lock(volatile slock_t *lock, const char *file, int line, const char *func)
{
	return 0;
}

/* ACE never took pins here: every wait for them would end at once */
TimestampTz
GetCurrentTimestamp(void)
{
	return PG_INT64_MAX;
}

void
pg_usleep(long microsec)
{
}

/* the pool's counters are bufstats.c's: nothing is counted here */
void
BufferCounterAdd(BufferCounter counter, uint64 n)
{
}

/* ---- the harness ---- */
static char **names;

static void
print_list(void)
{
	int			id;

	printf("order");
	for (id = BufferList->tail; id >= 0; id = BufferList->prev[id])
		printf(" %s%s", names[id], BufferList->cold[id] ? "*" : "");
	printf("\n");
}

int
main(int argc, char **argv)
{
	const char *policies[] = {"clock", "lru", "cflru", "lru_wsr"};
	bool		cold[CONCURRENT_IO_MAX_BATCH] = {false};
	int			candidates[CONCURRENT_IO_MAX_BATCH];
	BufferDesc *victim;
	uint32		state;
	int			n_w;
	int			i;
	int			n;

	if (argc < 5)
	{
		fprintf(stderr, "usage: %s POLICY CFLRU_WINDOW N_W PAGE...\n", argv[0]);
		return 2;
	}
	buffer_replacement_policy = -1;
	for (i = 0; i < 4; i++)
		if (strcmp(argv[1], policies[i]) == 0)
			buffer_replacement_policy = i;
	if (buffer_replacement_policy < 0)
	{
		fprintf(stderr, "unknown policy %s\n", argv[1]);
		return 2;
	}
	cflru_window = atof(argv[2]);
	n_w = atoi(argv[3]);
	NBuffers = argc - 4;
	if (NBuffers > CONCURRENT_IO_MAX_BATCH || n_w < 1 || n_w > CONCURRENT_IO_MAX_BATCH)
	{
		fprintf(stderr, "at most %d pages, and 1 <= N_W <= %d\n", CONCURRENT_IO_MAX_BATCH,
				CONCURRENT_IO_MAX_BATCH);
		return 2;
	}

	BufferDescriptors = calloc(NBuffers, sizeof(BufferDescPadded));
	MainLWLockArray = calloc(NUM_FIXED_LWLOCKS, sizeof(LWLockPadded));
	names = calloc(NBuffers, sizeof(char *));
	for (i = 0; i < NBuffers; i++)
	{
		BufferDesc *buf = GetBufferDescriptor(i);
		char	   *flags = strchr(argv[4 + i], ':');

		state = BM_VALID | BM_TAG_VALID;
		names[i] = argv[4 + i];
		if (flags)
		{
			*flags++ = '\0';
			for (; *flags; flags++)
			{
				if (*flags == 'D')
					state |= BM_DIRTY;
				else if (*flags == 'P')
					state += BUF_REFCOUNT_ONE;
				else if (*flags == 'W')
					cold[i] = true;
				else if (*flags == 'U' && flags[1] >= '0' && flags[1] <= '5')
					state += BUF_USAGECOUNT_ONE * (*++flags - '0');
				else
				{
					fprintf(stderr, "unknown flag %c in %s\n", *flags, names[i]);
					return 2;
				}
			}
		}
		buf->buf_id = i;
		buf->freeNext = FREENEXT_NOT_IN_LIST;
		pg_atomic_init_u32(&buf->state, state);
	}

	StrategyInitialize(true);
	StrategyControl->firstFreeBuffer = -1;	/* the pool is full */
	/* the list: each page placed at the head in turn, so the first given is the tail */
	for (i = 0; i < NBuffers; i++)
	{
		list_unlink(i);
		list_push_head(i);
		BufferList->cold[i] = cold[i];
	}

	victim = StrategyGetBuffer(NULL, &state, false);
	UnlockBufHdr(victim, state);
	printf("victim %s\n", names[victim->buf_id]);

	n = StrategyWriteBackCandidates(victim, candidates, n_w - 1);
	printf("writeback");
	for (i = 0; i < n; i++)
		printf(" %s", names[candidates[i]]);
	printf("\n");

	if (StrategyUsesList())
		print_list();
	return 0;
}
