-- The game's fields as a move reads them, in order: load.lua answers them, and so does
-- commit.lua when a move lost its race; store/games.py reads this list from here.
-- ``attempt`` is the random id of the write that made ``rev``: with it, a counter that
-- came back to an old value (a Redis that restarted without its last writes) still
-- tells one write from another. A match's game knows its match, seat, the window its
-- moves are taken in, and (co-op) its seated players.
local FIELDS = {'rev', 'snap', 'tok', 'player', 'next', 'daily', 'ranked', 'pid', 'ptok', 'bot', 'held', 'attempt', 'match', 'seat', 'window', 'coop'}
