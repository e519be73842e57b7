"""robots.txt for the fetchers (RFC 9309), in one package.

    rules      one robots.txt parsed (protego, with our fixes): may this agent fetch that path
    fetch      getting /robots.txt: redirects (spiderduck.core.redirects) and the RFC 9309 mapping of
               statuses and failures to a verdict (allow all, disallow all, the rules)
    verdict    what is cached: the rules or a blanket answer, and its byte encoding
    cache      the tiers: this process's LRU, then the shared store, then a fetch, once per host
               at a time
    store      the shared tier: memcached (robots_cache: memcached://HOST:PORT) or none
"""
