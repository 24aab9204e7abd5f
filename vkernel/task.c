/* The task record's accessors that check what they hand out. */
#include "vkernel/task.h"

#include "vkernel/report.h"

struct wait_state *parked_state(struct task *t, enum parked_kind kind)
{
	if (t->parked_on.kind != kind)
		task_die(t, "parked state of kind %d read as kind %d", (int)t->parked_on.kind,
			 (int)kind);
	return &t->parked_on;
}

struct wait_state *parked_state_new(struct task *t, enum parked_kind kind)
{
	t->parked_on.kind = kind;
	return &t->parked_on;
}
