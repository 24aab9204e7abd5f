/* A seccomp filter with a user-notification listener: a second thread's getppid is
 * notified, the main thread answers it with "continue". Natively the call completes;
 * under detrun the listener is refused (a notified call would sleep in the kernel while
 * its listener waits its turn: the group would hang). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *call_getppid(void *arg)
{
	printf("getppid: %s\n", syscall(SYS_getppid) > 0 ? "answered" : "failed");
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { 4, code };
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0) {
		printf("listener: refused (%s)\n", strerrorname_np(errno));
		printf("getppid: %s\n", syscall(SYS_getppid) > 0 ? "answered" : "failed");
		return 0;
	}
	printf("listener: installed\n");
	pthread_t th;
	pthread_create(&th, NULL, call_getppid, NULL);
	struct seccomp_notif req;
	memset(&req, 0, sizeof(req));
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
		struct seccomp_notif_resp resp = { .id = req.id,
						   .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	pthread_join(th, NULL);
	return 0;
}
