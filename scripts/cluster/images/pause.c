/*
 * The pod sandbox's process for the test cluster's pause image: it holds the pod's namespaces open, reaps the
 * zombies of processes that share its PID namespace, and exits on SIGINT or SIGTERM. Built static by
 * scripts/cluster/images.sh, so the image holds this one file. Our own, not Kubernetes' build/pause/linux/pause.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signal_number) {
    (void)signal_number;
    _exit(0);
}

static void reap(int signal_number) {
    (void)signal_number;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = saved;
}

static int on(int signal_number, void (*handler)(int)) {
    struct sigaction action = {0};
    action.sa_handler = handler;
    action.sa_flags = SA_RESTART | (signal_number == SIGCHLD ? SA_NOCLDSTOP : 0);
    sigemptyset(&action.sa_mask);
    return sigaction(signal_number, &action, NULL);
}

int main(void) {
    if (getpid() != 1) {
        fprintf(stderr, "pause: warning: not PID 1, zombies of other processes are not mine to reap\n");
    }
    if (on(SIGINT, stop) || on(SIGTERM, stop) || on(SIGCHLD, reap)) {
        perror("pause: sigaction");
        return 1;
    }
    for (;;) {
        pause();
    }
}
