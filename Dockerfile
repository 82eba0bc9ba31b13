# nextbot in a container: Debian 12, built and installed with the same script and
# make commands CI runs (scripts/deps, make, make install), running `nextbot daemon`
# with its work directory on a volume.
#   docker build -t nextbot-image .
#   docker run -v nextbot-state:/var/lib/nextbot \
#       -v /path/to/nextbot.yaml:/etc/nextbot/nextbot.yaml:ro \
#       -e NEXTBOT_SMTP_PASSWORD nextbot-image
# The config's workdir must be /var/lib/nextbot (the example config's is).
# Other commands replace CMD: docker run -v ... nextbot-image check-config  (ENTRYPOINT adds -c).
FROM debian:bookworm

ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 TZ=UTC

WORKDIR /src/nextbot
COPY . .

# scripts/deps installs the Debian packages nextbot needs (it runs apt-get as root).
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends ca-certificates dpkg \
    && scripts/deps \
    && make clean \
    && make \
    && make install PREFIX=/usr/local \
    && install -d -m 755 /etc/nextbot \
    && install -m 644 configs/linux-next.yaml /etc/nextbot/nextbot.yaml \
    && install -d -m 755 /var/lib/nextbot \
    && rm -rf /var/lib/apt/lists/*

# As root, nextbot runs build and test commands as runner.user (default nobody) with
# resource limits, so the daemon itself stays root inside the container.
VOLUME ["/var/lib/nextbot"]
WORKDIR /var/lib/nextbot

ENTRYPOINT ["/usr/local/bin/nextbot", "-c", "/etc/nextbot/nextbot.yaml"]
CMD ["daemon"]
