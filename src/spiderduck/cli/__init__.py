"""The `spiderduck` command: wires the roles together (`up`) and talks to a running service.

Before anything imports grpc: its fork handlers are off (GRPC_ENABLE_FORK_SUPPORT=false, unless
the environment says otherwise). Our processes fork only to exec (extraction workers, Chromium,
nats-server), and with grpcio 1.81 and later those handlers can abort such a child before its
exec: the poller they restart in it meets a closed epoll fd (grpc/grpc#43055). A CI run lost the
tests' HDFS so ("epoll_wait error: Bad file descriptor", the child killed by SIGABRT)."""
import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
